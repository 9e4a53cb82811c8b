package web

import (
	"net/http"

	"github.com/useprickle/prickle/shared/owners/notify/outbox"
)

// outboxPage is GET /dev/outbox: the dev outbox as a page, newest last, links clickable.
func (h *Handler) outboxPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "outbox.html", &struct {
		chrome
		Messages []outbox.Message
	}{chrome: chrome{Title: "Dev outbox", Bare: true}, Messages: h.cfg.Outbox.List()})
}

// outboxJSON is GET /dev/outbox.json: [{at, channel, to, subject, text, links, body}], newest last.
func (h *Handler) outboxJSON(w http.ResponseWriter, r *http.Request) {
	b, err := outbox.MarshalList(h.cfg.Outbox.List())
	if err != nil {
		h.failed(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(append(b, '\n'))
}
