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

# nginx, redis and python built from Debian packages (docs/images.md, "Images from Debian packages")
# into the store `make up` serves; an image already there is kept. Not part of `make up`: ~20 s each.
IMAGE_STORE ?= /var/lib/nodelet/images
DEBIAN_IMAGES := nginx:nginx redis:redis-server python:python3

.PHONY: debian-images
debian-images: build
	@for spec in $(DEBIAN_IMAGES); do name=$${spec%%:*}; pkg=$${spec#*:}; \
	  if ./bin/nodelet image ls -q --store $(IMAGE_STORE) 2>/dev/null | grep -qx "$$name:latest"; then echo "$$name:latest is in $(IMAGE_STORE)"; \
	  else ./bin/nodelet image build $$name --debian $$pkg --store $(IMAGE_STORE) || exit 1; fi; done
