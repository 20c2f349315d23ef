//go:build !unix

package services

// lockFile does nothing outside Unix: parallel test processes may then build
// the rate-limit service twice, each into its own temporary file.
func lockFile(string) (func(), error) { return func() {}, nil }
