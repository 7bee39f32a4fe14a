package pluginwire

import (
	"io"
	"log/slog"
	"strings"
)

// PluginLogger returns a slog logger for a plugin process: JSON lines on w
// (the plugin's stderr) with hclog's keys @level, @message and @timestamp,
// so that the go-plugin host re-logs each line at its level with its
// attributes.
func PluginLogger(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: hclogKeys}))
}

// hclogTime is the timestamp layout go-plugin's host parses.
const hclogTime = "2006-01-02T15:04:05.000000Z07:00"

func hclogKeys(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.LevelKey:
		return slog.String("@level", strings.ToLower(a.Value.String()))
	case slog.MessageKey:
		return slog.String("@message", a.Value.String())
	case slog.TimeKey:
		return slog.String("@timestamp", a.Value.Time().Format(hclogTime))
	}
	return a
}
