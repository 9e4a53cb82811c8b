// Package httprec is the one status recorder of the request log lines
// (the MCP endpoint, the web pages, the OAuth server, pull mode): each
// handler logs how its answer ended without the answer being read again.
package httprec

import "net/http"

// Recorder is an http.ResponseWriter that keeps the status it was sent.
type Recorder struct {
	http.ResponseWriter
	// Status is the status written, http.StatusOK until one is.
	Status int
}

// New wraps w; the status is 200 until WriteHeader says otherwise, as
// net/http answers a handler that writes a body first.
func New(w http.ResponseWriter) *Recorder {
	return &Recorder{ResponseWriter: w, Status: http.StatusOK}
}

// WriteHeader keeps the status, then sends it.
func (r *Recorder) WriteHeader(status int) {
	r.Status = status
	r.ResponseWriter.WriteHeader(status)
}
