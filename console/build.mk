# console: the web console's page (docs/console.md), bundled by esbuild into build/console/,
# which `nodelet server` serves at /ui/. Part of `make build`; `make console` alone rebuilds it.
.PHONY: console typecheck-console
CONSOLE_SRC := $(wildcard console/src/*) console/build.mjs
build: console
console: $(BUILD)/console/index.html
$(BUILD)/console/index.html: $(CONSOLE_SRC) node_modules/.package-lock.json
	node console/build.mjs
typecheck: typecheck-console
typecheck-console: deps-npm
	npx tsc -p console
