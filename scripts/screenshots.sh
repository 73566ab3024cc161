#!/bin/sh
# Screenshots of the built documentation, taken by headless Chromium:
# the landing page, a tutorial, an API page and a results page, as a reader
# sees them at 1280 x 900. Builds the site first (sphinx, warnings as errors).
#
#   sh scripts/screenshots.sh [OUT]      # default OUT: docs/_static/screenshots
#
# Needs the docs extra (pip install -e ".[docs]") and Chromium
# (Debian: apt-get install chromium; or CHROMIUM=/path/to/chrome).
set -eu
cd "$(dirname "$0")/.."
OUT=${1:-docs/_static/screenshots}
PYTHON=${PYTHON:-python}
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [ -z "$CHROMIUM" ]; then
    echo "scripts/screenshots.sh: no Chromium found (apt-get install chromium, or set CHROMIUM)" >&2
    exit 2
fi
SITE=$(mktemp -d "${TMPDIR:-/tmp}/fedgraph-site.XXXXXX")
trap 'rm -rf "$SITE"' EXIT
"$PYTHON" -m sphinx -W -q -b html docs "$SITE/html"
mkdir -p "$OUT"
for page in index tutorials/fede-vs-independent reference/api/runtime papers/fedlu; do
    name=$(echo "$page" | tr '/' '-')
    "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --window-size=1280,900 --screenshot="$OUT/.$name.tmp.png" \
        "file://$SITE/html/$page.html" > /dev/null 2>&1
    # written under a temporary name (Chromium wants a .png ending), then
    # renamed whole into place
    mv "$OUT/.$name.tmp.png" "$OUT/$name.png"
    echo "$OUT/$name.png"
done
