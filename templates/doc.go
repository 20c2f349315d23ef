// Package templates holds beamthrottle's Dataflow Flex Template: the
// launcher image (Dockerfile, launch.sh), the template metadata for the main
// pipeline (metadata.json) and for the replay recipe (metadata-replay.json),
// and the tests that keep them in step with the binary's flags. It has no
// API: the files are built with gcloud, see README.md.
package templates
