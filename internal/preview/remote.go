package preview

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// maxMessage bounds a request and a response to a function out of process:
// the largest fleet request is far below it, and a function's own receive
// limit is what it says it is.
const maxMessage = 64 << 20

// callTimeout bounds one RunFunction call to a function out of process.
const callTimeout = time.Minute

// A Remote is a function out of process: one this process started from its
// binary, or one already running at an address. Close stops what it
// started.
type Remote struct {
	// Run calls its RunFunction; a call that fails is a Fatal result
	// naming the function and the error, and Err says so.
	Run  Runner
	conn *grpc.ClientConn
	cmd  *exec.Cmd

	mu  sync.Mutex
	err error
}

// Err is the first call that failed (the function could not be reached,
// or did not answer in time), nil when none did: a preview whose calls
// failed says nothing about the release, and is not a report.
func (r *Remote) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Open reaches the function of a release: a path to its binary, which it
// starts on a free loopback port without TLS (serve --insecure), or the
// address (host:port) of a running function that serves gRPC without TLS,
// as crossplane render's Development runtime does.
func Open(release string) (*Remote, error) {
	if st, err := os.Stat(release); err == nil && !st.IsDir() {
		return start(release)
	}
	_, port, err := net.SplitHostPort(release)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n <= 0 || n > 65535 {
		return nil, fmt.Errorf("cannot use release %q: neither a function binary nor a host:port address", release)
	}
	c, err := net.DialTimeout("tcp", release, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the function at %s: %w", release, err)
	}
	_ = c.Close()
	return dial(release, nil)
}

// start starts a function binary on a free loopback port and dials it.
func start(binary string) (*Remote, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("cannot find a free port for %s: %w", binary, err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return nil, fmt.Errorf("cannot find a free port for %s: %w", binary, err)
	}
	cmd := exec.Command(binary, "--insecure", "--address="+addr, "--metrics-address=", "--max-recv-message-size="+strconv.Itoa(maxMessage>>20)) //nolint:gosec // the binary is the release the caller names to preview
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", binary, err)
	}
	for range 100 {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return dial(addr, cmd)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return nil, fmt.Errorf("cannot reach %s: it did not listen on %s within 5 s", binary, addr)
}

// dial connects to a function at addr; cmd, when not nil, is the process
// serving it, which Close stops.
func dial(addr string, cmd *exec.Cmd) (*Remote, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage)))
	if err != nil {
		if cmd != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		return nil, fmt.Errorf("cannot dial the function at %s: %w", addr, err)
	}
	client := fnv1.NewFunctionRunnerServiceClient(conn)
	r := &Remote{conn: conn, cmd: cmd}
	r.Run = func(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		rsp, err := client.RunFunction(ctx, req)
		if err != nil {
			r.mu.Lock()
			if r.err == nil {
				r.err = fmt.Errorf("cannot run the function at %s: %w", addr, err)
			}
			r.mu.Unlock()
			return &fnv1.RunFunctionResponse{Results: []*fnv1.Result{{
				Severity: fnv1.Severity_SEVERITY_FATAL,
				Message:  fmt.Sprintf("cannot run the function at %s: %v", addr, err),
			}}}
		}
		return rsp
	}
	return r, nil
}

// Close closes the connection and stops the process it started, if any.
func (r *Remote) Close() error {
	err := r.conn.Close()
	if r.cmd != nil {
		err = errors.Join(err, r.cmd.Process.Kill())
		_ = r.cmd.Wait() // killed: its exit status says so
	}
	return err
}
