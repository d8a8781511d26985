# nodelet — the two commands a user needs:
#   make up     set up this machine and start a one-node cluster (SQLite, local containerd, offline images)
#   make test   install what is missing, build, lint, and run unit + integration tests
#
# Each package may add targets in its own <pkg>/build.mk (included below) so that parallel work on
# different packages does not collide in this file.

SHELL := /bin/bash
.DEFAULT_GOAL := build
export PATH := $(CURDIR)/bin:$(PATH)

# Debian packages the runtime and the tests need (docs/architecture.md, "The machine the lab runs on").
DEB_PACKAGES := containerd runc crun containernetworking-plugins busybox-static etcd-server etcd-client iptables iproute2 gcc make tar systemd-container debootstrap zstd nftables conntrack curl tmux openssl bind9-dnsutils skopeo python3-kubernetes python3-pytest zsh chromium

BUILD := $(CURDIR)/build

.PHONY: deps deps-apt deps-npm build ts native lint typecheck gen gen-check test test-long test-unit test-integration test-integration-long bench up down clean

deps: deps-apt deps-npm

deps-apt:
	@bash scripts/ensure-debs.sh $(DEB_PACKAGES)

deps-npm: node_modules/.package-lock.json
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

ts: deps-npm
	npx tsc -b

# Native pieces (pause program, images, nodelet-cni wrapper…) are added by the packages' build.mk files.
native:

build: ts native

lint: deps-npm
	node scripts/check-package-graph.mjs
	npx eslint .

typecheck: deps-npm
	npx tsc -p tsconfig.check.json

gen: deps-npm
	npm run gen

# Generated CRI types must match proto/: regenerate and fail on any diff.
gen-check: gen
	@git diff --exit-code -- proto/ || { echo "proto/ generated files drifted from api.proto: run 'make gen' and commit"; exit 1; }

test-unit: build
	node scripts/run-tests.mjs unit

test-integration: build
	node scripts/run-tests.mjs integration

test: deps build lint typecheck gen-check test-unit test-integration

# Everything `test` runs plus the integration files marked `// nodelet-test: long` (see README, Testing).
test-integration-long: build
	node scripts/run-tests.mjs integration --long
	NODELET_TEST_DATASTORE=etcd node scripts/run-tests.mjs integration test/e2e/kubectl

test-long: deps build lint typecheck gen-check test-unit test-integration-long

# The quickstart: a one-node cluster on this machine (state in /var/lib/nodelet/lab; see README).
up: deps build
	./bin/nodelet lab up
	@bash scripts/nodelet-on-path.sh link

# The symlink goes even when lab down reports a problem (its exit code is kept).
down:
	@rc=0; if [ -f cli/dist/main.js ]; then ./bin/nodelet lab down || rc=$$?; else ./bin/nodelet-dev lab down || rc=$$?; fi; \
	bash scripts/nodelet-on-path.sh unlink; exit $$rc

clean:
	rm -rf $(BUILD) */dist

-include */build.mk
