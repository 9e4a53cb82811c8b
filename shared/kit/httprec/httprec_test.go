package httprec

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRecorderKeepsTheStatus(t *testing.T) {
	w := httptest.NewRecorder()
	rec := New(w)
	if rec.Status != http.StatusOK {
		t.Errorf("before WriteHeader: %d, want 200", rec.Status)
	}
	rec.WriteHeader(http.StatusTeapot)
	if rec.Status != http.StatusTeapot || w.Code != http.StatusTeapot {
		t.Errorf("after WriteHeader(418): recorded %d, sent %d", rec.Status, w.Code)
	}
}
