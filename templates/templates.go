// Package templates holds the files that the report package renders from: the HTML
// triage report's template, its style sheet and its script. They are a package of
// their own because //go:embed reads only the files of its package's folder and below,
// and the design names templates/ as a top-level folder beside report/.
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
