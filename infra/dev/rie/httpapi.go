package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/useprickle/prickle/shared/mcp/lambdamcp"
)

// httpAPIForward serves a request as an API Gateway HTTP API with a Lambda
// proxy integration (payload format 2.0, the $default stage) does for
// ApiGateway=http: header names lower-cased and repeated values joined by
// commas, cookies in their own list, the raw path and query string, and a
// body that is not text base64-encoded; the function's cookies come back
// as Set-Cookie headers.
type httpAPIForward struct {
	Lambda   lambdamcp.Invoker
	Function string
	RouteKey string // e.g. "ANY /mcp"; "" derives the web routes' keys
}

// webRouteKey is the key of the HttpApi route (template.yaml) a web or oauth request matches.
func webRouteKey(r *http.Request) string {
	switch {
	case r.URL.Path == "/":
		return r.Method + " /"
	case strings.HasPrefix(r.URL.Path, "/a/") && strings.Count(r.URL.Path, "/") == 2:
		return r.Method + " /a/{token}"
	case strings.HasPrefix(r.URL.Path, "/oauth/"):
		return r.Method + " /oauth/{proxy+}"
	case strings.HasPrefix(r.URL.Path, "/.well-known/"):
		return r.Method + " /.well-known/{proxy+}"
	}
	return r.Method + " /{proxy+}"
}

func (f httpAPIForward) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resp, err := f.invoke(r)
	if err != nil {
		slog.ErrorContext(r.Context(), "HTTP API integration failed", "function", f.Function, "error", err.Error())
		http.Error(w, `{"message":"Internal Server Error"}`, http.StatusInternalServerError)
		return
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	for _, c := range resp.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			http.Error(w, `{"message":"Internal Server Error"}`, http.StatusInternalServerError)
			return
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

// httpAPIEvent builds the payload 2.0 event of a request.
func httpAPIEvent(r *http.Request, routeKey string) (events.APIGatewayV2HTTPRequest, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return events.APIGatewayV2HTTPRequest{}, fmt.Errorf("read request: %w", err)
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: routeKey, RawPath: r.URL.Path, RawQueryString: r.URL.RawQuery,
		Headers: map[string]string{},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: routeKey, Stage: "$default", DomainName: r.Host, RequestID: randomID(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: r.Method, Path: r.URL.Path, Protocol: r.Proto, SourceIP: "127.0.0.1", UserAgent: r.UserAgent(),
			},
			TimeEpoch: time.Now().UnixMilli(),
		},
	}
	for k, vs := range r.Header {
		if strings.EqualFold(k, "Cookie") {
			for _, v := range vs {
				for _, c := range strings.Split(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						ev.Cookies = append(ev.Cookies, c)
					}
				}
			}
			continue
		}
		ev.Headers[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	if q := r.URL.Query(); len(q) > 0 {
		ev.QueryStringParameters = map[string]string{}
		for k, vs := range q {
			ev.QueryStringParameters[k] = strings.Join(vs, ",")
		}
	}
	if len(body) > 0 {
		if isText(r.Header.Get("Content-Type")) && utf8.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		}
	}
	return ev, nil
}

// isText is what an HTTP API passes through as text; anything else (form
// posts among them) arrives base64-encoded.
func isText(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return strings.HasPrefix(mt, "text/") || mt == "application/json"
}

func (f httpAPIForward) invoke(r *http.Request) (events.APIGatewayV2HTTPResponse, error) {
	var out events.APIGatewayV2HTTPResponse
	key := f.RouteKey
	if key == "" {
		key = webRouteKey(r)
	}
	ev, err := httpAPIEvent(r, key)
	if err != nil {
		return out, err
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return out, fmt.Errorf("encode HTTP API event: %w", err)
	}
	res, err := f.Lambda.Invoke(r.Context(), &awslambda.InvokeInput{FunctionName: aws.String(f.Function), Payload: payload})
	if err != nil {
		return out, fmt.Errorf("invoke %s: %w", f.Function, err)
	}
	if res.FunctionError != nil {
		return out, fmt.Errorf("%s failed: %s: %s", f.Function, aws.ToString(res.FunctionError), res.Payload)
	}
	if err := json.Unmarshal(res.Payload, &out); err != nil {
		return out, fmt.Errorf("decode %s response: %w", f.Function, err)
	}
	if out.StatusCode == 0 {
		return out, fmt.Errorf("%s answered no statusCode: %.200s", f.Function, res.Payload)
	}
	return out, nil
}

// httpAPIRouter serves the HTTP API's routes (template.yaml's HttpApi):
// /mcp → mcp, which hands every tool call on by Lambda Invoke; /slack/... →
// slack; /runner/... → runner; everything else → web.
func (s *Stack) httpAPIRouter(mux *http.ServeMux) {
	mux.Handle("/mcp", httpAPIForward{Lambda: s, Function: "mcp", RouteKey: "ANY /mcp"})
	if s.Functions["slack"] != nil {
		mux.Handle("/slack/", httpAPIForward{Lambda: s, Function: "slack", RouteKey: "POST /slack/interactivity"})
	}
	if s.Functions["runner-api"] != nil {
		for _, path := range []string{"/runner/claim", "/runner/extend", "/runner/ack", "/runner/ended", "/runner/start", "/runner/project"} {
			mux.Handle(path, httpAPIForward{Lambda: s, Function: "runner-api", RouteKey: "POST " + path})
		}
	}
	if s.Functions["oauth"] != nil {
		mux.Handle("/oauth/", httpAPIForward{Lambda: s, Function: "oauth"})
		mux.Handle("/.well-known/", httpAPIForward{Lambda: s, Function: "oauth"})
	}
	if s.Functions["web"] != nil {
		mux.Handle("/", httpAPIForward{Lambda: s, Function: "web"})
	}
}
