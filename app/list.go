package app

import (
	"context"
	"errors"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/ollama"
)

// ListIndexes describes every index of the store, built or not,
// as `lore index list` shows them.
func (e *Engine) ListIndexes(ctx context.Context) ([]index.Info, error) {
	return e.store.List(ctx)
}

// OllamaStatus asks Ollama now whether it answers and has the chat model:
// unlike ChatStatus, which remembers a model found ready, a readiness
// probe must see Ollama go away.
func (e *Engine) OllamaStatus(ctx context.Context) error {
	_, err := ollama.Check(ctx, e.client, e.hostLabel(), e.cfg.ChatModel)
	switch {
	case err == nil:
		e.sawOllamaUp()
	case errors.Is(err, ollama.ErrUnreachable):
		e.sawOllamaDown()
	}
	return err
}

// IndexNames lists the indexes of the store without opening any (shell
// completion).
func (e *Engine) IndexNames(ctx context.Context) ([]string, error) {
	return e.store.Names(ctx)
}

// RemoveIndex deletes the index name once confirm (if set) agrees, and
// says what it held.
func (e *Engine) RemoveIndex(ctx context.Context, name string, confirm func(index.Info) error) (index.Info, error) {
	return e.store.Remove(ctx, name, confirm)
}
