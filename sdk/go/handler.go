package kubeloop

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultBodyLimitBytes is the contract's default request limit (8 MiB).
const DefaultBodyLimitBytes = 8 << 20

// Options of the handler; Settings reads them from flags and environment as the chart passes them.
type Options struct {
	BodyLimitBytes int64
	// SigningKeys (ParseSecrets): requests must be signed and replies are signed. None: neither.
	SigningKeys [][]byte
	// Now is the clock for signatures; tests pin it.
	Now func() time.Time
}

// Handler serves a function: POST on its paths, GET /healthz and /readyz. SetDraining makes /readyz
// answer 503 (shutdown began).
type Handler struct {
	fn       Function
	options  Options
	draining atomic.Bool
}

// NewHandler is the http.Handler of a function, for your own server or mux.
func NewHandler(fn Function, options Options) *Handler {
	if options.BodyLimitBytes <= 0 {
		options.BodyLimitBytes = DefaultBodyLimitBytes
	}
	if options.Now == nil {
		options.Now = time.Now
	}
	return &Handler{fn: fn, options: options}
}

// SetDraining fails /readyz from now on.
func (h *Handler) SetDraining() { h.draining.Store(true) }

func write(w http.ResponseWriter, reply Reply) {
	for name, values := range reply.Header {
		w.Header()[name] = values
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(reply.Body)))
	w.WriteHeader(reply.Status)
	_, _ = w.Write(reply.Body)
}

func (h *Handler) refuse(w http.ResponseWriter, r *http.Request) {
	for _, p := range h.fn.Paths() {
		if r.URL.Path == p {
			w.Header().Set("Allow", "POST")
			write(w, jsonReply(405, map[string]any{"statusCode": 405, "code": "MethodNotAllowed", "message": fmt.Sprintf("%s %s is not allowed; POST a %s", r.Method, r.URL.Path, h.fn.requestKind())}, nil))
			return
		}
	}
	write(w, jsonReply(404, map[string]any{"statusCode": 404, "code": "NotFound", "message": fmt.Sprintf("%s %s is not served here", r.Method, r.URL.Path)}, nil))
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/healthz" {
		w.Write([]byte("ok"))
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/readyz" {
		if h.draining.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
		return
	}
	onPath := false
	for _, p := range h.fn.Paths() {
		onPath = onPath || r.URL.Path == p
	}
	if r.Method != http.MethodPost || !onPath {
		h.refuse(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, h.options.BodyLimitBytes+1))
	if err != nil {
		write(w, ErrorReply(400, "InvalidJSON", "could not read the request: "+err.Error(), ""))
		return
	}
	var reply Reply
	if int64(len(body)) > h.options.BodyLimitBytes {
		// Read and drop the rest, so the reply reaches a client still sending.
		_, _ = io.Copy(io.Discard, r.Body)
		// Refused before the signature is checked: never signed (docs/contract.md, "Signed calls").
		reply = ErrorReply(413, "PayloadTooLarge", fmt.Sprintf("request body is larger than the limit of %d bytes (set KUBELOOP_BODY_LIMIT_BYTES or --body-limit-bytes to raise it)", h.options.BodyLimitBytes), "")
	} else {
		reply = h.fn.Handle(r.Header, body, h.options.SigningKeys, h.options.Now())
	}
	if reply.Status >= 400 {
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(reply.Body, &e)
		log.Printf(`{"level":"%s","function":%q,"statusCode":%d,"msg":%q}`, map[bool]string{true: "error", false: "warn"}[reply.Status >= 500], h.fn.Name, reply.Status, e.Message)
	}
	write(w, reply)
}

// Settings is what a function image is started with (docs/contract.md, "Function image interface").
type Settings struct {
	Host              string
	Port              int
	DrainDelaySeconds float64
	Options           Options
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// ReadSettings parses flags (--port, --host, --body-limit-bytes, --drain-delay-seconds,
// --signing-secret-file, --log-level) over the environment (PORT, HOST, KUBELOOP_*).
func ReadSettings(args []string) (Settings, error) {
	fs := flag.NewFlagSet("function", flag.ContinueOnError)
	port, _ := strconv.Atoi(envOr("PORT", "8080"))
	limit, _ := strconv.ParseInt(envOr("KUBELOOP_BODY_LIMIT_BYTES", strconv.Itoa(DefaultBodyLimitBytes)), 10, 64)
	drain, _ := strconv.ParseFloat(envOr("KUBELOOP_DRAIN_DELAY_SECONDS", "0"), 64)
	s := Settings{}
	fs.IntVar(&s.Port, "port", port, "port to listen on (PORT)")
	fs.StringVar(&s.Host, "host", envOr("HOST", "0.0.0.0"), "address to listen on (HOST)")
	fs.Int64Var(&s.Options.BodyLimitBytes, "body-limit-bytes", limit, "largest request body (KUBELOOP_BODY_LIMIT_BYTES)")
	fs.Float64Var(&s.DrainDelaySeconds, "drain-delay-seconds", drain, "after SIGTERM, fail /readyz this long before closing (KUBELOOP_DRAIN_DELAY_SECONDS)")
	secretFile := fs.String("signing-secret-file", os.Getenv("KUBELOOP_SIGNING_SECRET_FILE"), "the Standard Webhooks secret, from a mounted file (KUBELOOP_SIGNING_SECRET_FILE; or KUBELOOP_SIGNING_SECRET)")
	fs.String("log-level", envOr("KUBELOOP_LOG_LEVEL", "info"), "log level (KUBELOOP_LOG_LEVEL)")
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	if s.Port < 0 || s.Port > 65535 {
		return s, fmt.Errorf("--port/PORT %d is not a port number", s.Port)
	}
	if s.Options.BodyLimitBytes < 1024 {
		return s, errors.New("--body-limit-bytes/KUBELOOP_BODY_LIMIT_BYTES must be at least 1024")
	}
	secret, source := os.Getenv("KUBELOOP_SIGNING_SECRET"), "KUBELOOP_SIGNING_SECRET"
	if *secretFile != "" {
		source = fmt.Sprintf("--signing-secret-file (%s)", *secretFile)
		data, err := os.ReadFile(*secretFile)
		if err != nil {
			return s, fmt.Errorf("%s: cannot read: %v", source, errors.Unwrap(err))
		}
		secret = string(data)
	}
	if secret != "" {
		keys, err := ParseSecrets(secret, source)
		if err != nil {
			return s, err
		}
		s.Options.SigningKeys = keys
	}
	return s, nil
}

// Serve runs fn with the settings from os.Args and the environment until SIGTERM or SIGINT: then
// /readyz fails, the drain delay passes, the listener closes and in-flight calls finish. It prints
// "listening on http://host:port" once ready, and exits 2 on a bad setting.
func Serve(fn Function) {
	settings, err := ReadSettings(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", fn.Name, err)
		os.Exit(2)
	}
	handler := NewHandler(fn, settings.Options)
	listener, err := net.Listen("tcp", net.JoinHostPort(settings.Host, strconv.Itoa(settings.Port)))
	if err != nil {
		log.Fatal(err)
	}
	server := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 30 * time.Second}
	// Signals first: a SIGTERM right after "listening" must drain, not kill.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	fmt.Printf("%s listening on http://%s\n", fn.Name, listener.Addr())
	log.SetFlags(0)
	drained := make(chan struct{})
	go func() {
		<-ctx.Done()
		handler.SetDraining()
		time.Sleep(time.Duration(settings.DrainDelaySeconds * float64(time.Second)))
		_ = server.Shutdown(context.Background()) // waits for the calls in flight
		close(drained)
	}()
	if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
	<-drained
}
