# oci: native pieces of the offline images (ARCHITECTURE.md decision 2).
# The static pause program for the sandbox image. The images are built from it on demand by
# ensureLabImages() (tests, `nodelet server`); `make lab-images` builds them ahead of time.
$(BUILD)/pause: images/pause/pause.c
	@mkdir -p $(BUILD)
	gcc -static -Os -s -Wall -Wextra -o $@.tmp $< && mv $@.tmp $@

native: $(BUILD)/pause

# pause:3.9 and busybox:latest in the image store $(BUILD)/images (rebuilt when pause changes).
$(BUILD)/images/index.json: $(BUILD)/pause | deps-npm
	rm -rf $(BUILD)/images
	./bin/nodelet-dev image build --lab --store $(BUILD)/images

.PHONY: lab-images
lab-images: $(BUILD)/images/index.json
