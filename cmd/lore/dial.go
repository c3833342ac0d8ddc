package main

import (
	"context"
	"net"
	"sync"
	"time"
)

// dialRecorder, when set (tests; `--debug` logs each dial), sees every
// connection lore opens: the offline guarantee is tested by asserting that
// nothing but the Ollama host is ever dialed.
var dialRecorder struct {
	sync.Mutex
	fn func(network, addr string)
}

func recordDials(fn func(network, addr string)) {
	dialRecorder.Lock()
	defer dialRecorder.Unlock()
	dialRecorder.fn = fn
}

// dialer is the one dial function every network client of lore uses.
func dialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialRecorder.Lock()
		fn := dialRecorder.fn
		dialRecorder.Unlock()
		if fn != nil {
			fn(network, addr)
		}
		return d.DialContext(ctx, network, addr)
	}
}
