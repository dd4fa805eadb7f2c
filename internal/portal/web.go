package portal

import "embed"

// webFS is the page: index.html, app.js and style.css, served from the
// binary so that installing the portal needs no build step.
//
//go:embed web
var webFS embed.FS
