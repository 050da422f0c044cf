package main

import (
	"path/filepath"
	"testing"

	kubeloop "github.com/kubeloop/kubeloop/sdk/go"
)

// The Go port answers every recorded case of the TypeScript function in-process
// (test/fixtures/pod-name-label); `kubeloop conformance` checks it over HTTP.
func TestAnswersEveryRecordedCase(t *testing.T) {
	fixtures, err := kubeloop.LoadFixtures(filepath.Join("..", "..", "..", "test", "fixtures", "pod-name-label"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fixtures) < 5 {
		t.Fatalf("only %d fixtures", len(fixtures))
	}
	for _, fixture := range fixtures {
		t.Run(fixture.Name, func(t *testing.T) {
			if err := kubeloop.CheckFixture(PodNameLabel, fixture); err != nil {
				t.Error(err)
			}
		})
	}
}
