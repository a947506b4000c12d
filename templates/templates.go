// Package templates holds the files that the report package renders from: the HTML
// triage report's template, its style sheet and its script. They live here, and not
// under report/, because //go:embed cannot reach a parent folder.
//
// The report inlines the style sheet and the script into the one file it writes, so
// these files must not load anything themselves: no fonts, images or scripts from
// elsewhere.
package templates

import "embed"

// FS holds report.html.tmpl, report.css and report.js.
//
//go:embed *.tmpl *.css *.js
var FS embed.FS
