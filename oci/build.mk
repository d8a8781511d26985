# oci: native pieces of the offline images (ARCHITECTURE.md decision 2).
# The static pause program for the sandbox image; the images themselves are built from it on demand
# by ensureLabImages() (tests, `make up`, `nodelet server`) into $(BUILD)/images.
$(BUILD)/pause: images/pause/pause.c
	@mkdir -p $(BUILD)
	gcc -static -Os -s -Wall -Wextra -o $@.tmp $< && mv $@.tmp $@

native: $(BUILD)/pause
