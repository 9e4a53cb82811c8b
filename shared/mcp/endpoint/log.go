package endpoint

import (
	"bytes"
	"net/http"
	"time"

	"github.com/useprickle/prickle/shared/kit/httprec"
)

// recorder keeps the status and the start of the body so the request log
// can say how the call ended without a second parse of the whole answer.
type recorder struct {
	*httprec.Recorder
	head bytes.Buffer
}

const recordedBytes = 4096

func (r *recorder) Write(b []byte) (int, error) {
	if room := recordedBytes - r.head.Len(); room > 0 {
		r.head.Write(b[:min(room, len(b))])
	}
	return r.ResponseWriter.Write(b)
}

// requestLog is the one line each request leaves: tool, caller, task, latency and outcome.
type requestLog struct {
	method, rpc, tool, caller, task, route, outcome string
}

func (h *Handler) logRequest(r *http.Request, rec *recorder, l *requestLog, start time.Time) {
	if l.outcome == "" {
		l.outcome = outcomeOf(rec)
	}
	if l.route == "" {
		l.route = "served"
	}
	h.cfg.Log.InfoContext(r.Context(), "mcp request",
		"http_method", l.method, "rpc_method", l.rpc, "tool", l.tool,
		"caller", l.caller, "task", l.task, "route", l.route,
		"status", rec.Status, "outcome", l.outcome,
		"latency_ms", float64(h.cfg.Now().Sub(start).Microseconds())/1000)
}

// outcomeOf reads the answer's first bytes: ok, tool_error (isError) or rpc_error.
func outcomeOf(rec *recorder) string {
	head := rec.head.Bytes()
	switch {
	case rec.Status >= 400:
		return "http_" + http.StatusText(rec.Status)
	case bytes.Contains(head, []byte(`"isError":true`)):
		return "tool_error"
	case bytes.Contains(head, []byte(`"error":{`)):
		return "rpc_error"
	}
	return "ok"
}
