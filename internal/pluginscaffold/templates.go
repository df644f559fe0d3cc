package pluginscaffold

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"text/template"
)

// templateFS holds the plugin's files as templates: templates/common/ the
// files of every kind, templates/KIND/ each kind's own, each named as it is
// written with .tmpl added (so that no .go file sits in this package's
// tree), and templates/fragments.tmpl the blocks they share. The templates
// use [[ ]] as delimiters, so that the workflow files they write keep their
// own {{ }}.
//
//go:embed all:templates
var templateFS embed.FS

// parseKind parses the templates of a kind's files into one set, each
// template named for the file it writes, and returns the set and those
// names, sorted.
func parseKind(kind string) (*template.Template, []string, error) {
	set, err := template.New("fragments.tmpl").Delims("[[", "]]").ParseFS(templateFS, "templates/fragments.tmpl")
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for _, dir := range []string{"templates/common", path.Join("templates", kind)} {
		err := fs.WalkDir(templateFS, dir, func(file string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			text, err := fs.ReadFile(templateFS, file)
			if err != nil {
				return err
			}
			name := strings.TrimSuffix(strings.TrimPrefix(file, dir+"/"), ".tmpl")
			if _, err := set.New(name).Parse(string(text)); err != nil {
				return fmt.Errorf("template %s: %w", file, err)
			}
			names = append(names, name)
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	slices.Sort(names)
	return set, names, nil
}
