#!/bin/sh
# Flex Template entry point: FLEX_TEMPLATE_GO_BINARY names this file. The Go
# template launcher runs it with the template parameters and its own flags
# (--runner, --project, --region, --staging_location, --template_location,
# ...); they all follow, unchanged, the two flags added here:
#
#   --async          the Go Dataflow runner waits for the job to finish unless
#                    told not to; a template launch must return once the job
#                    is submitted.
#   --worker_binary  the binary Dataflow stages for the workers: this static
#                    linux/amd64 binary itself. Without it Beam Go
#                    cross-compiles the pipeline from source with `go build`,
#                    and the launcher image has neither Go nor the source.
exec /template/beamthrottle --async --worker_binary=/template/beamthrottle "$@"
