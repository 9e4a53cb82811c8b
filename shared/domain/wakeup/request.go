package wakeup

import (
	"io"
	"net/http"
)

// ReadPost reads a wake request's body, at most max bytes, before its
// signature is checked: another method is answered 405 with notPost (and
// Allow: POST), a body over max or unreadable 413. On false the answer is
// written.
func ReadPost(w http.ResponseWriter, r *http.Request, max int64, notPost string) ([]byte, bool) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, notPost, http.StatusMethodNotAllowed)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	return body, true
}
