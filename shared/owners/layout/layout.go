// Package layout holds the one page layout (head.html: the "head" and
// "foot" templates) that the people's pages (shared/owners/web) and the OAuth
// consent pages (shared/owners/oauth) both render.
//
// A page's data has Title, Root (the relative path to the site root), Me
// and CSRF (who is signed in, and the form token of sign-out), Public (may
// be indexed) and Bare (the brand alone, without the site navigation).
package layout

import (
	"embed"
	"html/template"
)

//go:embed head.html
var files embed.FS

// Parse adds the layout's templates to t, so a package's pages call
// {{template "head" .}} and {{template "foot" .}} from one definition.
func Parse(t *template.Template) *template.Template {
	return template.Must(t.ParseFS(files, "head.html"))
}
