// Command benchtable reads the output of the core benchmarks of package
// service (go test -bench, any -count) on stdin and prints one Markdown
// table: per populator and ID type, the median of each figure over the
// runs. scripts/bench.sh runs it.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// procSuffix is the -GOMAXPROCS suffix go test appends to benchmark names.
var procSuffix = regexp.MustCompile(`-\d+$`)

// results maps a benchmark name (without the suffix) and a unit to every
// value reported for it, one per run.
type results map[string]map[string][]float64

func parse(r io.Reader) (results, error) {
	res := results{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue // not a result line
		}
		name := procSuffix.ReplaceAllString(f[0], "")
		if res[name] == nil {
			res[name] = map[string][]float64{}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: value %q: %v", name, f[i], err)
			}
			res[name][f[i+1]] = append(res[name][f[i+1]], v)
		}
	}
	return res, sc.Err()
}

// median returns the median of the values of name's unit, and whether
// there were any.
func (r results) median(name, unit string) (float64, bool) {
	v := slices.Clone(r[name][unit])
	if len(v) == 0 {
		return 0, false
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2], true
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2, true
}

func (r results) runs(name, unit string) int { return len(r[name][unit]) }

func (r results) cell(name, unit, format string) string {
	m, ok := r.median(name, unit)
	if !ok {
		return "–"
	}
	return fmt.Sprintf(format, m)
}

// sustainedCell is "1,010,628 (98.7%, best 99.2%)": the median rate, its
// share of the budget, and the best share of any run, which on a shared
// machine tells what the code does when nothing else takes the CPU.
func (r results) sustainedCell(name string) string {
	rate, ok := r.median(name, "ids/s")
	if !ok {
		return "–"
	}
	pct, _ := r.median(name, "budget%")
	best := slices.Max(r[name]["budget%"])
	return fmt.Sprintf("%s (%.1f%%, best %.1f%%)", thousands(int64(rate+0.5)), pct, best)
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func main() {
	window := flag.String("window", "2s", "the measured window of the sustained runs (-vesta.sustain), for the caption")
	flag.Parse()
	res, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	// Populators and types in the order they appear in BenchmarkCPU names.
	var pops, types []string
	runs := 0
	for name := range res {
		parts := strings.Split(name, "/")
		if len(parts) < 3 || (parts[0] != "BenchmarkCPU" && parts[0] != "BenchmarkSustained") {
			continue
		}
		if !slices.Contains(pops, parts[1]) {
			pops = append(pops, parts[1])
		}
		if !slices.Contains(types, parts[2]) {
			types = append(types, parts[2])
		}
		runs = max(runs, res.runs(name, "ns/op"))
	}
	if len(pops) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no BenchmarkCPU or BenchmarkSustained results on stdin")
		os.Exit(1)
	}
	slices.Sort(pops)
	slices.Sort(types)

	fmt.Printf("Median of %d runs. CPU columns: a fake clock, so the bit budget never stops GenId. "+
		"Sustained columns: the real clock, IDs per second issued over a %s window aligned on time units, "+
		"and their share of the bit budget (max-peak 1,048,576/s, min-granularity 1,024,000/s), "+
		"with the best share of any run.\n\n", runs, *window)
	fmt.Println("| populator | type | serial ns/op | parallel ns/op | allocs/op (serial / parallel) | GenIds(1000) ns/id | sustained g=1 ids/s (budget) | sustained g=64 ids/s (budget) |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|")
	for _, p := range pops {
		for _, t := range types {
			cpu := "BenchmarkCPU/" + p + "/" + t
			sus := "BenchmarkSustained/" + p + "/" + t
			fmt.Printf("| %s | %s | %s | %s | %s / %s | %s | %s | %s |\n", p, t,
				res.cell(cpu+"/serial", "ns/op", "%.1f"),
				res.cell(cpu+"/parallel", "ns/op", "%.1f"),
				res.cell(cpu+"/serial", "allocs/op", "%.0f"),
				res.cell(cpu+"/parallel", "allocs/op", "%.0f"),
				res.cell("BenchmarkGenIds1000/"+p+"/"+t, "ns/id", "%.2f"),
				res.sustainedCell(sus+"/g=1"),
				res.sustainedCell(sus+"/g=64"))
		}
	}
}
