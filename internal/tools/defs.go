package tools

// Definition describes a tool to a model: its name, what it does and the
// JSON Schema of its arguments.
type Definition struct {
	Name        string
	Description string
	Parameters  map[string]any
}

func object(required []string, props map[string]any) map[string]any {
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
func integer(desc string) map[string]any {
	return map[string]any{"type": "integer", "description": desc}
}
func boolean(desc string) map[string]any {
	return map[string]any{"type": "boolean", "description": desc}
}

// Definitions returns the builtin tools in a fixed order, as advertised to
// models.
func Definitions() []Definition {
	return []Definition{
		{
			Name:        "Read",
			Description: "Read a text file in the working directory. Returns its lines, optionally a window of them.",
			Parameters: object([]string{"file_path"}, map[string]any{
				"file_path": str("Path of the file, relative to the working directory (or absolute inside it)."),
				"offset":    integer("1-based line to start at (default 1)."),
				"limit":     integer("Maximum number of lines to return (default: all)."),
			}),
		},
		{
			Name:        "Write",
			Description: "Create or overwrite a file in the working directory with the given content. Parent directories are created.",
			Parameters: object([]string{"file_path", "content"}, map[string]any{
				"file_path": str("Path of the file, relative to the working directory (or absolute inside it)."),
				"content":   str("The complete new content of the file."),
			}),
		},
		{
			Name:        "Edit",
			Description: "Replace text in an existing file. old_string must occur exactly once unless replace_all is true.",
			Parameters: object([]string{"file_path", "old_string", "new_string"}, map[string]any{
				"file_path":   str("Path of the file, relative to the working directory (or absolute inside it)."),
				"old_string":  str("The exact text to replace."),
				"new_string":  str("The replacement text."),
				"replace_all": boolean("Replace every occurrence instead of requiring exactly one."),
			}),
		},
		{
			Name:        "Bash",
			Description: "Run a shell command in the working directory and return its combined output and exit code.",
			Parameters: object([]string{"command"}, map[string]any{
				"command": str("The command line, run with bash -c (or /bin/sh -c when bash is missing)."),
				"timeout": integer("Timeout in seconds (capped by the step's limit)."),
			}),
		},
		{
			Name:        "Glob",
			Description: "List files in the working directory matching a glob pattern; ** matches any number of directories.",
			Parameters: object([]string{"pattern"}, map[string]any{
				"pattern": str("Glob pattern, e.g. **/*.go or cmd/*/main.go."),
				"path":    str("Directory to search in, relative to the working directory (default: the working directory)."),
			}),
		},
		{
			Name:        "Grep",
			Description: "Search file contents with a regular expression (Go RE2 syntax). Returns path:line:text for each match.",
			Parameters: object([]string{"pattern"}, map[string]any{
				"pattern":     str("Regular expression to search for."),
				"path":        str("File or directory to search, relative to the working directory (default: the working directory)."),
				"glob":        str("Only search files whose path matches this glob, e.g. *.go."),
				"ignore_case": boolean("Match case-insensitively."),
			}),
		},
	}
}
