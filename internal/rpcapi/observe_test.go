package rpcapi

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Methods lists every method net/rpc serves of a Receiver, and only
// those.
func TestMethodsAreTheReceiversMethods(t *testing.T) {
	var served []string
	rt := reflect.TypeFor[*Receiver]()
	for i := range rt.NumMethod() {
		m := rt.Method(i)
		// net/rpc's rule: two arguments, a pointer reply, an error result.
		if m.Type.NumIn() == 3 && m.Type.In(2).Kind() == reflect.Pointer && m.Type.NumOut() == 1 &&
			m.Type.Out(0) == reflect.TypeFor[error]() {
			served = append(served, m.Name)
		}
	}
	assert.ElementsMatch(t, served, Methods)
}

func TestCodeNames(t *testing.T) {
	seen := map[string]Code{}
	for _, ce := range codeErrs {
		n := ce.code.Name()
		assert.NotContains(t, seen, n, "one name per code")
		seen[n] = ce.code
	}
	assert.Equal(t, "internal", CodeInternal.Name())
	assert.Equal(t, "unavailable", CodeUnavailable.Name())
	assert.Equal(t, "code_99", Code(99).Name())
}

type observedCall struct {
	method string
	ids    int
	code   Code // 0: no error
}

type callLog struct {
	mu    sync.Mutex
	calls []observedCall
}

func (l *callLog) ObserveCall(method string, ids int, err *Error, elapsed time.Duration) {
	c := observedCall{method: method, ids: ids}
	if err != nil {
		c.code = err.Code
	}
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
}

// The observer is told each call's method, the IDs it issued and its
// code, successes and refusals alike.
func TestObserver(t *testing.T) {
	log := &callLog{}
	r := NewReceiver(&recorder{deadline: make(chan bool, 10)}, 5, WithObserver(log), WithSegments(&segmentStub{next: map[string]int64{"order": 1}, deadline: make(chan bool, 10)}))
	require.NoError(t, r.GenId(GenIdArgs{}, &GenIdReply{}))
	require.NoError(t, r.GenIds(GenIdsArgs{Count: 3}, &GenIdsReply{}))
	require.NoError(t, r.GenIds(GenIdsArgs{Count: 6}, &GenIdsReply{}))
	require.NoError(t, r.SegmentNextIds(SegmentArgs{Tag: "order", Count: 2}, &SegmentReply{}))
	require.NoError(t, r.MakeId(MakeIdArgs{Set: 0x80}, &MakeIdReply{}))
	assert.Equal(t, []observedCall{
		{MethodGenId, 1, 0},
		{MethodGenIds, 3, 0},
		{MethodGenIds, 0, CodeInvalidArgument},
		{MethodSegmentNextIds, 2, 0},
		{MethodMakeId, 0, CodeInvalidArgument},
	}, log.calls)
}
