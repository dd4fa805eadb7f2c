package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
)

// portalClient calls the portal's API.
type portalClient struct {
	base string
	http *http.Client
}

// problem is the body of the portal's error answers.
type problem struct {
	Error  string `json:"error"`
	Fields []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"fields"`
}

// fields are the fields a problem names, sorted.
func (p problem) fields() []string {
	var out []string
	for _, f := range p.Fields {
		out = append(out, f.Field)
	}
	slices.Sort(out)
	return out
}

// answer is one answer of the portal.
type answer struct {
	code   int
	header http.Header
	body   []byte
}

// problem decodes an error answer's body.
func (a answer) problem() problem {
	p := problem{}
	_ = json.Unmarshal(a.body, &p)
	return p
}

func (a answer) String() string {
	return fmt.Sprintf("%d %s", a.code, bytes.TrimSpace(a.body))
}

// call makes one request with a bearer token ("" for none).
func (p *portalClient) call(method, path, token string, body []byte) (answer, error) {
	req, err := http.NewRequest(method, p.base+path, bytes.NewReader(body)) //nolint:noctx // bounded by the client's timeout
	if err != nil {
		return answer{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rsp, err := p.http.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer rsp.Body.Close() //nolint:errcheck // read to the end below
	b, err := io.ReadAll(rsp.Body)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return answer{code: rsp.StatusCode, header: rsp.Header, body: b}, nil
}

// expect makes a request and fails unless it is answered with code.
func (p *portalClient) expect(code int, who, method, path, token string, body []byte) (answer, error) {
	a, err := p.call(method, path, token, body)
	if err != nil {
		return a, err
	}
	if a.code != code {
		return a, fmt.Errorf("%s: %s %s: want %d, got %s", who, method, path, code, a)
	}
	return a, nil
}
