package mcpserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport is MCP as newline-delimited JSON on a reader and a
// writer (a client's pipes), in place of the SDK's IOTransport, which ends
// the session on the first frame it cannot decode, drops the requests it
// has read when the input ends, and answers requests the client
// cancelled. This one answers a malformed frame with a JSON-RPC error
// (-32700 not JSON, -32600 not a request) and reads on; answers every
// request it read before the input ended, then ends; and sends nothing
// for a request the client cancelled (the spec's SHOULD NOT).
type StdioTransport struct {
	In  io.Reader
	Out io.Writer
	// MaxMessage bounds one line in bytes; a longer one is refused and
	// skipped. 0 is 4 MiB, as lore mcp --http bounds a body.
	MaxMessage int
	// Drain bounds how long the requests still running when the input
	// ends may take to be answered. 0 is ten minutes.
	Drain time.Duration
}

const (
	defaultMaxMessage = 4 << 20
	defaultDrain      = 10 * time.Minute
)

// Connect starts reading t.In.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		in:       t.In,
		out:      t.Out,
		max:      t.MaxMessage,
		drain:    t.Drain,
		incoming: make(chan jsonrpc.Message),
		ended:    make(chan struct{}),
		closed:   make(chan struct{}),
		answered: make(chan struct{}, 1),
		pending:  map[jsonrpc.ID]bool{},
	}
	if c.max <= 0 {
		c.max = defaultMaxMessage
	}
	if c.drain <= 0 {
		c.drain = defaultDrain
	}
	go c.readLoop()
	return c, nil
}

type stdioConn struct {
	in    io.Reader
	out   io.Writer
	max   int
	drain time.Duration

	incoming chan jsonrpc.Message
	ended    chan struct{} // closed after the last message of the input was taken
	readErr  error         // why the input ended; set before ended is closed

	closeOnce sync.Once
	closed    chan struct{}

	writeMu sync.Mutex

	mu       sync.Mutex
	pending  map[jsonrpc.ID]bool // calls read and not answered; true once cancelled
	answered chan struct{}       // a pending call was answered
}

func (c *stdioConn) SessionID() string { return "" }

// readLoop splits the input into lines, answers those that are not a
// JSON-RPC message and hands the others to Read.
func (c *stdioConn) readLoop() {
	defer close(c.ended)
	r := bufio.NewReaderSize(c.in, 64<<10)
	for {
		line, tooLong, err := readLine(r, c.max)
		if tooLong {
			c.refuse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message longer than %d bytes: refused; send smaller requests", c.max))
		} else if msg, ok := c.decode(line); ok {
			select {
			case c.incoming <- msg:
			case <-c.closed:
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.readErr = err
			}
			return
		}
	}
}

// readLine reads up to the next newline, keeping at most max bytes: a
// longer line is read to its end and dropped, so that a client cannot
// make lore hold more than max for one message.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 { // the newline, and a CR before it
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

// frame is the part of a message checked before the SDK decodes it.
type frame struct {
	Version *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
}

// decode is line as a message, or false after answering why it is not one.
func (c *stdioConn) decode(line []byte) (jsonrpc.Message, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, false
	}
	if !json.Valid(line) {
		c.refuse(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON; send one JSON-RPC message per line")
		return nil, false
	}
	if line[0] != '{' {
		c.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: a message is one JSON object per line (batches are not supported)")
		return nil, false
	}
	var f frame
	if err := json.Unmarshal(line, &f); err != nil {
		c.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return nil, false
	}
	id := f.ID
	if len(id) > 0 && id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') && string(id) != "null" {
		c.refuse(nil, jsonrpc.CodeInvalidRequest, "invalid request: id must be a string or a number")
		return nil, false
	}
	if f.Version == nil || *f.Version != "2.0" {
		c.refuse(id, jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		c.refuse(id, jsonrpc.CodeInvalidRequest, "invalid request: "+oneLine(err.Error()))
		return nil, false
	}
	return msg, true
}

// refuse answers a frame that never reached the server, by its id when
// it had a usable one (null otherwise, as JSON-RPC says).
func (c *stdioConn) refuse(id json.RawMessage, code int64, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}})
	if err != nil { // an id that is valid JSON but not re-encodable
		b, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": jsonrpc.Error{Code: code, Message: msg}})
	}
	c.writeLine(b)
}

// Read is the next message; once the input has ended, io.EOF as soon as
// every call read has been answered (or Drain has passed).
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.incoming:
		c.track(msg)
		return msg, nil
	case <-c.ended:
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	deadline := time.NewTimer(c.drain)
	defer deadline.Stop()
	for c.waiting() > 0 {
		select {
		case <-c.answered:
		case <-c.closed:
			return nil, io.EOF
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			return nil, fmt.Errorf("input ended and %d requests were still unanswered after %s", c.waiting(), c.drain)
		}
	}
	if c.readErr != nil {
		return nil, c.readErr
	}
	return nil, io.EOF
}

func (c *stdioConn) waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// track notes the calls read, and the ones the client cancels.
func (c *stdioConn) track(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case req.IsCall():
		c.pending[req.ID] = false
	case req.Method == "notifications/cancelled":
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			return
		}
		if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
			if _, ok := c.pending[id]; ok {
				c.pending[id] = true
			}
		}
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		cancelled, known := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		if known {
			select {
			case c.answered <- struct{}{}:
			default:
			}
		}
		if cancelled {
			return nil // the client said it no longer wants it
		}
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	return c.writeLine(b)
}

func (c *stdioConn) writeLine(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(append(b, '\n'))
	return err
}

// Close stops reading; a reader that can be closed is, so that the loop
// blocked on it ends.
func (c *stdioConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		if rc, ok := c.in.(io.Closer); ok {
			err = rc.Close()
		}
	})
	return err
}
