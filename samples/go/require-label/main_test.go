package main

import (
	"path/filepath"
	"testing"

	kubeloop "github.com/kubeloop/kubeloop/sdk/go"
)

// The Go port answers every recorded case of the TypeScript require-label in-process
// (test/fixtures/require-label); `kubeloop conformance` checks it over HTTP on POST /admit.
func TestAnswersEveryRecordedCase(t *testing.T) {
	fixtures, err := kubeloop.LoadFixtures(filepath.Join("..", "..", "..", "test", "fixtures", "require-label"))
	if err != nil || len(fixtures) < 3 {
		t.Fatalf("fixtures: %v (%d)", err, len(fixtures))
	}
	for _, fixture := range fixtures {
		t.Run(fixture.Name, func(t *testing.T) {
			if err := kubeloop.CheckFixture(RequireLabel, fixture); err != nil {
				t.Error(err)
			}
		})
	}
}
