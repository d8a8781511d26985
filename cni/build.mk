# cni: the C build of nodelet-cni (cni/shim/nodelet-cni.c), the plugin containerd calls for every
# pod ADD/DEL. installNodeletCni() installs $(BUILD)/nodelet-cni when it exists and falls back to
# the node script cni/shim/nodelet-cni.mjs otherwise (see docs/cni.md for the start-up numbers).
$(BUILD)/nodelet-cni: cni/shim/nodelet-cni.c
	@mkdir -p $(BUILD)
	gcc -O2 -s -Wall -Wextra -o $@.tmp $< && mv $@.tmp $@

native: $(BUILD)/nodelet-cni

# ADD+DEL of the default chain through the engine vs a direct exec loop (needs root).
.PHONY: bench-cni
bench-cni:
	node --conditions=source --import tsx bench/cni.ts

bench: bench-cni
