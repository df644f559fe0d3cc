package awfapi

import (
	"embed"
	"io/fs"
	"net/http"
)

// docsFS holds the interactive reference: Swagger UI (vendored from npm,
// docs/README.md) and the page that starts it.
//
//go:embed docs/index.html docs/init.js docs/swagger-ui-bundle.js docs/swagger-ui.css docs/LICENSE docs/NOTICE docs/swagger-ui-bundle.js.LICENSE.txt
var docsFS embed.FS

// registerDocs serves the reference at /docs and its files below it.
func registerDocs(mux *http.ServeMux) {
	sub, _ := fs.Sub(docsFS, "docs")
	files := http.StripPrefix("/docs/", http.FileServerFS(sub))
	mux.HandleFunc("GET /docs", func(w http.ResponseWriter, r *http.Request) {
		b, _ := fs.ReadFile(sub, "index.html")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
	})
	mux.Handle("GET /docs/", files)
}
