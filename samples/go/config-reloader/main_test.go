package main

import (
	"path/filepath"
	"testing"

	kubeloop "github.com/kubeloop/kubeloop/sdk/go"
)

// The Go port answers every recorded case of the TypeScript function in-process, related ConfigMap
// included (test/fixtures/config-reloader); test/http/samples-related-replay.test.ts replays them over HTTP.
func TestAnswersEveryRecordedCase(t *testing.T) {
	fixtures, err := kubeloop.LoadFixtures(filepath.Join("..", "..", "..", "test", "fixtures", "config-reloader"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fixtures) < 5 {
		t.Fatalf("only %d fixtures", len(fixtures))
	}
	for _, fixture := range fixtures {
		t.Run(fixture.Name, func(t *testing.T) {
			if err := kubeloop.CheckFixture(ConfigReloader, fixture); err != nil {
				t.Error(err)
			}
		})
	}
}

// The hash is the TypeScript function's: the same content hashes the same whatever the key order, and
// characters JSON.stringify leaves alone (<, >, &) are hashed as they are.
func TestConfigHashMatchesTypeScript(t *testing.T) {
	a := kubeloop.Object{"data": map[string]any{"b": "2", "a": "<&>"}}
	b := kubeloop.Object{"data": map[string]any{"a": "<&>", "b": "2"}, "binaryData": map[string]any{}}
	if configHash(a) != configHash(b) {
		t.Errorf("key order or an absent binaryData changed the hash")
	}
	// node -e 'console.log(require("crypto").createHash("sha256").update(JSON.stringify({data:{a:"<&>",b:"2"},binaryData:{}})).digest("hex").slice(0,32))'
	if got, want := configHash(a), "d404da9c28b06c9eb2d228db2cafca39"; got != want {
		t.Errorf("configHash = %s, want %s", got, want)
	}
}
