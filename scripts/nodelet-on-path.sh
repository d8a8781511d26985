#!/usr/bin/env bash
# `make up` / `make down`: put this checkout's bin/nodelet on PATH as /usr/local/bin/nodelet, and
# take it off again. Only a symlink to this checkout's bin/nodelet is ours: a wrapper that
# `nodelet install server` wrote (or anything else at that path) is left alone and said so; a
# symlink whose target is gone (a checkout since removed) is stale and is replaced.
set -euo pipefail
link=${NODELET_LINK:-/usr/local/bin/nodelet}
target=$(cd "$(dirname "$0")/.." && pwd)/bin/nodelet
ours() { [ -L "$link" ] && [ "$(readlink "$link")" = "$target" ]; }
case "${1:-}" in
  link)
    if ours; then echo "nodelet on PATH: $link → $target (already)";
    elif [ -L "$link" ] && [ ! -e "$link" ]; then
      was=$(readlink "$link"); ln -sfn "$target" "$link" && echo "nodelet on PATH: $link → $target (replaced a stale link to $was)";
    elif [ -e "$link" ] || [ -L "$link" ]; then echo "nodelet on PATH: left $link alone (not ours: $(readlink -f "$link" 2>/dev/null || echo "a file")); use ./bin/nodelet for this checkout";
    else mkdir -p "$(dirname "$link")" && ln -s "$target" "$link" && echo "nodelet on PATH: $link → $target"; fi ;;
  unlink)
    if ours; then rm -f "$link" && echo "removed $link (the symlink make up added)"; fi ;;
  *) echo "usage: $0 link|unlink" >&2; exit 2 ;;
esac
