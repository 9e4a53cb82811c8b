// Package sameorigin is the one cross-site check of the POSTs of Prickle's
// pages: the people's pages (shared/owners/web) and the OAuth consent pages
// (shared/owners/oauth).
package sameorigin

import (
	"net/http"
	"net/url"
	"strings"
)

// Post says whether a POST may come from the pages' own origin own, so a
// form another site submits decides nothing: it is refused when the browser
// marks it as from another site (Sec-Fetch-Site) or when its Origin names
// another origin than own ("" matches none). An absent Origin, or "null" as
// browsers send it for the page's own form under Referrer-Policy
// no-referrer, passes; the form token still has to match.
func Post(r *http.Request, own string) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		return true
	}
	return own != "" && strings.EqualFold(origin, own)
}

// Of is the origin (scheme://host) of a base URL, so the pages compare with
// what browsers send; "" for one that does not parse or names no host, so a
// broken base URL refuses, never allows.
func Of(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
