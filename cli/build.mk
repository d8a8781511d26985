# cli: the reliability soak (docs/reliability.md). Not part of `make test`: it needs the fixed
# lab ports and bridge for its whole run (`flock /tmp/nodelet-itest.lock make soak`).
#   make soak         default run (≤ 10 min), SOAK_ARGS="--seed N --keep-going" to replay / see all
#   make soak-smoke   about 3.5 min (the quick faults)
#   make soak-long    30 rounds, API server away 60 s
.PHONY: soak soak-smoke soak-long
soak: build
	@bash scripts/soak.sh $(SOAK_ARGS)
soak-smoke: build
	@bash scripts/soak.sh --smoke $(SOAK_ARGS)
soak-long: build
	@bash scripts/soak.sh --long $(SOAK_ARGS)
