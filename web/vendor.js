// Copies the layout library's browser bundle and licences into
// pkg/viz/assets/, where go:embed picks them up. Run after `npm ci`.
const fs = require("fs");
const path = require("path");
const out = path.join(__dirname, "..", "pkg", "viz", "assets");
const copy = (from, to) => fs.copyFileSync(path.join(__dirname, "node_modules", from), path.join(out, to));
copy("@dagrejs/dagre/dist/dagre.min.js", "dagre.min.js");
copy("@dagrejs/dagre/LICENSE", "dagre.LICENSE");
copy("@dagrejs/graphlib/LICENSE", "graphlib.LICENSE");
const v = require("./node_modules/@dagrejs/dagre/package.json").version;
fs.writeFileSync(path.join(out, "dagre.VERSION"), "@dagrejs/dagre " + v + "\n");
