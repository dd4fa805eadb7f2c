package portal

import "embed"

// webFS are the pages: index.html and app.js (environments), fleet.html
// and fleet.js (the fleet view), shared.js, and style.css and fleet.css
// (which both pages load, in that order), served from the binary so that
// installing the portal needs no build step.
//
//go:embed web
var webFS embed.FS
