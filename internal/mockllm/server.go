package mockllm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// API names the wire protocol a request used.
type API string

const (
	Anthropic API = "anthropic" // POST /v1/messages
	Responses API = "responses" // POST /v1/responses
	Chat      API = "chat"      // POST /v1/chat/completions
	Gemini    API = "gemini"    // POST /v1beta/models/{model}:generateContent
	Other     API = "other"     // anything else: HEAD /, model lists, unknown paths
)

// Usage is the token figures a reply reports. Input counts every input
// token, cached ones included; each protocol splits it its own way
// (Anthropic's input_tokens leaves the cache reads out, OpenAI's and
// Google's include them), so a CLI that reports the whole input reports
// Input.
type Usage struct {
	Input  int `yaml:"input" json:"input"`
	Output int `yaml:"output" json:"output"`
	Cached int `yaml:"cached" json:"cached"`
}

// Rule is one scripted answer. The first rule whose Match is in the
// prompt (the text of the last user message; "" matches any), whose Body
// is in the raw request body, whose API is empty or the request's, whose
// Turn, ToolResult and Result fit the conversation, and that has uses
// left answers.
type Rule struct {
	Match string `yaml:"match" json:"match"`
	// Body tells apart calls that carry the same prompt: gemini's model
	// router sends the user's prompt with a response schema of its own
	// ("complexity_score").
	Body string `yaml:"body" json:"body"`
	API  API    `yaml:"api" json:"api"`
	// Turn, when set, matches only the request of that turn of its
	// conversation: 1 for the first call, 2 for the one after the model's
	// first tool calls, and so on (a model reply without tool calls, such
	// as the canned one qwen puts before the prompt, is no turn).
	Turn int `yaml:"turn" json:"turn"`
	// ToolResult, when set, matches only requests that do (true) or do
	// not (false) carry tool results after the model's last reply.
	ToolResult *bool `yaml:"tool_result" json:"tool_result"`
	// Result, when set, matches only requests carrying a tool result
	// whose text holds it.
	Result string `yaml:"result" json:"result"`
	// Reply is the assistant's text, with Usage as its usage.
	Reply string `yaml:"reply" json:"reply"`
	// Tools, when set, make the reply ask for these tool calls (after
	// Reply's text, if any), in the protocol's own shape: the model stops
	// for tool use and the CLI runs them and calls again with their
	// results. A rule with Tools and no Turn or Times answers every turn
	// with a tool call: a runaway agent.
	Tools []ToolCall `yaml:"tools" json:"tools"`
	Usage Usage      `yaml:"usage" json:"usage"`
	// Status, when set, answers with this HTTP error instead, in the
	// provider's error shape, with Message as its message.
	Status  int    `yaml:"status" json:"status"`
	Message string `yaml:"message" json:"message"`
	// Code, with Status, replaces the error's type (Anthropic) or type and
	// code (OpenAI: insufficient_quota); Headers are sent with the answer
	// (Anthropic's anthropic-ratelimit-unified-* of a spent usage limit).
	Code    string            `yaml:"code" json:"code"`
	Headers map[string]string `yaml:"headers" json:"headers"`
	// Hang sends nothing until the client goes away or the server closes.
	Hang bool `yaml:"hang" json:"hang"`
	// Times is how often the rule may answer; 0 is without limit.
	Times int `yaml:"times" json:"times"`
	// Meet, when set, holds the answer until MeetCount requests (2 when
	// 0) answered by rules of the same Meet have arrived, this one
	// included, or until MeetWait (a minute when 0) has passed; the
	// record's Met says which. Requests held until all arrived overlapped
	// in time, whatever the machine's speed: how a test proves that calls
	// ran side by side without timing them.
	Meet      string        `yaml:"meet" json:"meet"`
	MeetCount int           `yaml:"meet_count" json:"meet_count"`
	MeetWait  time.Duration `yaml:"meet_wait" json:"meet_wait"`
	// Delay waits this long before answering (after a Meet): a real
	// model's time to answer, which calls side by side spend at once.
	Delay time.Duration `yaml:"delay" json:"delay"`
}

// Request is what the server saw of one request and what it answered.
type Request struct {
	API    API    `json:"api"`
	Method string `json:"method"`
	Path   string `json:"path"` // with the query
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	// Prompt is the text of the last user message as received: its text
	// parts joined with newlines.
	Prompt string `json:"prompt"`
	// Parts are the text parts of that message, each as received: a CLI
	// may send the user's prompt as one part among its own (claude puts a
	// <system-reminder> part first).
	Parts []string `json:"parts"`
	Body  []byte   `json:"body"`
	// Turn is the request's turn in its conversation: 1 + the model
	// replies with tool calls it carries.
	Turn int `json:"turn"`
	// Results are the texts of the tool results the request carries
	// after the model's last reply (a JSON text where a result is not
	// text).
	Results []string `json:"results,omitempty"`
	// Tools are the names of the tool calls the reply asked for.
	Tools []string `json:"tools,omitempty"`
	// Rule is the index of the rule that answered, -1 for none.
	Rule   int   `json:"rule"`
	Status int   `json:"status"`
	Usage  Usage `json:"usage"` // what the reply reported; zero for errors
	// Arrived is when the request came in; Answered when its answer
	// began (zero for a hang). Met says that its rule's Meet was complete
	// before the answer, not given up after MeetWait.
	Arrived  time.Time `json:"arrived"`
	Answered time.Time `json:"answered"`
	Met      bool      `json:"met,omitempty"`
}

// Server is a running mock. It listens on 127.0.0.1 only.
type Server struct {
	URL string // http://127.0.0.1:PORT, no trailing slash

	srv  *http.Server
	ln   net.Listener
	done chan struct{}

	mu       sync.Mutex
	rules    []Rule
	used     []int
	reqs     []Request
	observer func(Request)
	replies  int // replies so far, for unique message and call ids
	meets    map[string]*meeting
}

// meeting is one Meet of the rules: how many requests arrived, and full,
// closed when the last of them did.
type meeting struct {
	arrived int
	full    chan struct{}
}

// Start listens on a free port of 127.0.0.1 and serves rules.
func Start(rules []Rule) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mockllm: listen: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, done: make(chan struct{})}
	s.SetRules(rules)
	s.srv = &http.Server{Handler: s}
	go s.srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed
	return s, nil
}

// Close releases hanging requests and stops the server.
func (s *Server) Close() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	close(s.done)
	return s.srv.Close()
}

// SetRules replaces the rules and resets their counts; the record of
// requests is kept.
func (s *Server) SetRules(rules []Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append([]Rule(nil), rules...)
	s.used = make([]int, len(rules))
	s.meets = map[string]*meeting{}
}

// Requests returns a copy of every request so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Reset forgets the requests recorded so far.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = nil
}

// match picks the rule for a request and counts its use; -1 when none.
func (s *Server) match(c call, body []byte) (Rule, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.rules {
		if r.API != "" && r.API != c.api {
			continue
		}
		if r.Times > 0 && s.used[i] >= r.Times {
			continue
		}
		if !strings.Contains(c.prompt, r.Match) || !bytes.Contains(body, []byte(r.Body)) {
			continue
		}
		if !r.fits(c) {
			continue
		}
		s.used[i]++
		return r, i
	}
	return Rule{}, -1
}

// fits says whether the rule's Turn, ToolResult and Result fit the call.
func (r Rule) fits(c call) bool {
	if r.Turn != 0 && r.Turn != c.turn {
		return false
	}
	if r.ToolResult != nil && *r.ToolResult != (len(c.results) > 0) {
		return false
	}
	if r.Result == "" {
		return true
	}
	for _, res := range c.results {
		if strings.Contains(res, r.Result) {
			return true
		}
	}
	return false
}

// meet counts the request in its rule's Meet and holds it until the
// meeting is complete (true) or MeetWait has passed, the client has gone
// or the server closes (false).
func (s *Server) meet(ctx context.Context, r Rule) bool {
	n, wait := r.MeetCount, r.MeetWait
	if n <= 0 {
		n = 2
	}
	if wait <= 0 {
		wait = time.Minute
	}
	s.mu.Lock()
	m := s.meets[r.Meet]
	if m == nil {
		m = &meeting{full: make(chan struct{})}
		s.meets[r.Meet] = m
	}
	m.arrived++
	if m.arrived == n {
		close(m.full)
	}
	s.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-m.full:
		return true
	case <-t.C:
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

// count numbers a reply, for its message's and its calls' ids.
func (s *Server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies++
	return s.replies
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	f := s.observer
	s.mu.Unlock()
	if f != nil {
		f(r)
	}
}

// Observe calls f with each request as it is recorded (before a hang).
func (s *Server) Observe(f func(Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observer = f
}

// call is one parsed model request, whatever its protocol.
type call struct {
	api    API
	model  string
	stream bool
	prompt string
	parts  []string
	// turn is 1 + the model replies the request carries; results are the
	// tool results after the last of them.
	turn    int
	results []string
}

// answer is what a reply says: text, then tool calls, with its usage.
// id numbers the reply: each has its own message id, as a real API's has
// (claude merges the assistant messages that share one).
type answer struct {
	id    string
	text  string
	tools []toolUse
	usage Usage
}

// protocol reads requests of one API and writes its answers.
type protocol interface {
	parse(r *http.Request, body []byte) (call, error)
	reply(w http.ResponseWriter, c call, a answer)
	fail(w http.ResponseWriter, status int, msg, code string)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	body, _ := io.ReadAll(r.Body)
	rec := Request{API: Other, Method: r.Method, Path: r.URL.RequestURI(), Body: body, Rule: -1, Arrived: arrived}
	p := route(r)
	if p == nil {
		rec.Answered = time.Now()
		rec.Status = other(w, r)
		s.record(rec)
		return
	}
	c, err := p.parse(r, body)
	rec.API = c.api
	if err != nil {
		rec.Status, rec.Answered = http.StatusBadRequest, time.Now()
		s.record(rec)
		p.fail(w, rec.Status, "mockllm: "+err.Error(), "")
		return
	}
	rec.Model, rec.Stream, rec.Prompt, rec.Parts = c.model, c.stream, c.prompt, c.parts
	rec.Turn, rec.Results = c.turn, c.results
	rule, i := s.match(c, body)
	rec.Rule = i
	if i >= 0 && rule.Meet != "" {
		rec.Met = s.meet(r.Context(), rule)
	}
	if rule.Delay > 0 {
		s.wait(r.Context(), rule.Delay)
	}
	if !rule.Hang {
		rec.Answered = time.Now()
	}
	switch {
	case i < 0:
		rec.Status = http.StatusInternalServerError
		s.record(rec)
		p.fail(w, rec.Status, fmt.Sprintf("mockllm: no rule matches this %s request; prompt: %q", c.api, clip(c.prompt, 300)), "")
	case rule.Hang:
		rec.Status = 0
		s.record(rec)
		s.hang(r.Context())
	case rule.Status != 0:
		rec.Status = rule.Status
		s.record(rec)
		for k, v := range rule.Headers {
			w.Header().Set(k, v)
		}
		p.fail(w, rule.Status, rule.Message, rule.Code)
	default:
		rec.Status, rec.Usage = http.StatusOK, rule.Usage
		a := answer{id: fmt.Sprint(s.count()), text: rule.Reply, usage: rule.Usage}
		for j, t := range rule.Tools {
			rec.Tools = append(rec.Tools, t.Name)
			a.tools = append(a.tools, t.use(fmt.Sprintf("%s_%d", a.id, j)))
		}
		s.record(rec)
		p.reply(w, c, a)
	}
}

// wait waits d, or until the client goes away or the server closes.
func (s *Server) wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-s.done:
	}
}

func (s *Server) hang(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-s.done:
	}
}

// route picks the protocol from the path; nil for the paths that are not
// model calls.
func route(r *http.Request) protocol {
	if r.Method != http.MethodPost {
		return nil
	}
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/messages/count_tokens"):
		return nil
	case strings.HasSuffix(p, "/messages"):
		return anthropic{}
	case strings.HasSuffix(p, "/responses"):
		return responses{}
	case strings.HasSuffix(p, "/chat/completions"):
		return chat{}
	case strings.Contains(p, "/models/") && (strings.HasSuffix(p, ":generateContent") || strings.HasSuffix(p, ":streamGenerateContent")):
		return gemini{}
	}
	return nil
}

// other answers what is not a model call: HEAD /, token counts, model
// lists; anything else is a 404 that names the path.
func other(w http.ResponseWriter, r *http.Request) int {
	p := r.URL.Path
	switch {
	case r.Method == http.MethodHead:
		w.WriteHeader(http.StatusOK)
		return http.StatusOK
	case strings.HasSuffix(p, "/messages/count_tokens"):
		return writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 10})
	case strings.HasSuffix(p, ":countTokens"):
		return writeJSON(w, http.StatusOK, map[string]any{"totalTokens": 10})
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/models"):
		return writeJSON(w, http.StatusOK, map[string]any{
			"object": "list",
			"data":   []map[string]any{{"id": "mock-model", "object": "model", "created": 0, "owned_by": "mockllm"}},
			"models": []map[string]any{{"name": "models/mock-model", "displayName": "mock-model"}},
		})
	}
	return writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
		"message": fmt.Sprintf("mockllm: no such endpoint: %s %s", r.Method, r.URL.RequestURI()), "type": "not_found_error"}})
}

func writeJSON(w http.ResponseWriter, status int, v any) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client may have gone
	return status
}

// sse writes server-sent events: "event: NAME" lines when named, then one
// data line each; flushed as they go.
type sse struct {
	w http.ResponseWriter
}

func startSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

func (e sse) send(name string, v any) {
	if name != "" {
		fmt.Fprintf(e.w, "event: %s\n", name)
	}
	data, _ := json.Marshal(v)
	fmt.Fprintf(e.w, "data: %s\n\n", data)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (e sse) raw(line string) {
	fmt.Fprintf(e.w, "data: %s\n\n", line)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// chunks splits a reply in a few deltas, as a model streams it.
func chunks(text string) []string {
	if text == "" {
		return []string{""}
	}
	var out []string
	r := []rune(text)
	size := len(r)/3 + 1
	for len(r) > 0 {
		n := min(len(r), size)
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return out
}

// textOf reads the text of a message's content — a string, or an array of
// parts with "text" (any "type" that carries text) — into the call's
// prompt, its parts joined with newlines.
func (c *call) textOf(content json.RawMessage) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		c.prompt, c.parts = s, []string{s}
		return
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return
	}
	c.parts = nil
	for _, p := range parts {
		if p.Text != "" {
			c.parts = append(c.parts, p.Text)
		}
	}
	c.prompt = strings.Join(c.parts, "\n")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
