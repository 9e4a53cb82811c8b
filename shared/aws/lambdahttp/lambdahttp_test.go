package lambdahttp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// seen is what the echo handler saw of a request.
type seen struct {
	Method, Path, Auth, Session, Body string
	Query                             []string
	Accept                            []string
}

// echo records the request and answers 201 with a header, two cookies and
// a body that is binary when the request asks for it.
func echo(got *seen) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		*got = seen{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: string(body),
			Query: r.URL.Query()["q"], Accept: r.Header.Values("Accept")}
		if c, err := r.Cookie("sid"); err == nil {
			got.Session = c.Value
		}
		w.Header().Set("X-Out", "yes")
		http.SetCookie(w, &http.Cookie{Name: "a", Value: "1", HttpOnly: true})
		http.SetCookie(w, &http.Cookie{Name: "b", Value: "2", Secure: true})
		if r.URL.Query().Get("binary") == "1" {
			w.Header().Set("Content-Type", "image/png")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte{0x89, 'P', 'N', 'G', 0xff, 0x00})
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("ok"))
	})
}

// response is what both payload versions answer, read the same way.
type response struct {
	Status  int
	Header  string
	Cookies []string
	Body    []byte
}

func decodeV1(t *testing.T, b []byte) response {
	var r events.APIGatewayProxyResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	body := []byte(r.Body)
	if r.IsBase64Encoded {
		body, _ = base64.StdEncoding.DecodeString(r.Body)
	}
	return response{Status: r.StatusCode, Header: strings.Join(r.MultiValueHeaders["X-Out"], ","), Cookies: r.MultiValueHeaders["Set-Cookie"], Body: body}
}

func decodeV2(t *testing.T, b []byte) response {
	var r events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Headers["Set-Cookie"]; ok {
		t.Errorf("v2 response carries Set-Cookie in headers; HTTP APIs read cookies from the cookies field: %v", r.Headers)
	}
	body := []byte(r.Body)
	if r.IsBase64Encoded {
		body, _ = base64.StdEncoding.DecodeString(r.Body)
	}
	return response{Status: r.StatusCode, Header: r.Headers["X-Out"], Cookies: r.Cookies, Body: body}
}

func TestBothPayloadVersions(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', 0xff, 0x00}
	form := base64.StdEncoding.EncodeToString([]byte("choice=approve&x=\x00\xff"))
	cases := []struct {
		name    string
		event   string
		want    seen
		decode  func(*testing.T, []byte) response
		binary  bool
		version string
	}{
		{
			name: "REST v1: headers, cookie header, query, text body",
			event: `{"resource":"/mcp","path":"/mcp","httpMethod":"POST",
				"headers":{"Authorization":"Bearer t1","Cookie":"sid=s1; other=x","Accept":"application/json"},
				"multiValueHeaders":{"Authorization":["Bearer t1"],"Cookie":["sid=s1; other=x"],"Accept":["application/json","text/event-stream"]},
				"queryStringParameters":{"q":"b"},"multiValueQueryStringParameters":{"q":["a","b"]},
				"requestContext":{"stage":"dev","httpMethod":"POST"},"body":"{\"jsonrpc\":\"2.0\"}","isBase64Encoded":false}`,
			want:   seen{Method: "POST", Path: "/mcp", Auth: "Bearer t1", Session: "s1", Body: `{"jsonrpc":"2.0"}`, Query: []string{"a", "b"}, Accept: []string{"application/json", "text/event-stream"}},
			decode: decodeV1,
		},
		{
			name: "REST v1: base64 body in, binary body out",
			event: `{"path":"/a/tok","httpMethod":"POST","headers":{"authorization":"Bearer t2"},
				"queryStringParameters":{"binary":"1"},"body":"` + form + `","isBase64Encoded":true}`,
			want:   seen{Method: "POST", Path: "/a/tok", Auth: "Bearer t2", Body: "choice=approve&x=\x00\xff"},
			decode: decodeV1, binary: true,
		},
		{
			name: "HTTP API v2: lower-case headers, cookies field, raw query string, text body",
			event: `{"version":"2.0","routeKey":"ANY /mcp","rawPath":"/mcp","rawQueryString":"q=a&q=b",
				"cookies":["sid=s3","other=x"],
				"headers":{"authorization":"Bearer t3","accept":"application/json, text/event-stream","content-type":"application/json"},
				"queryStringParameters":{"q":"a,b"},
				"requestContext":{"stage":"$default","domainName":"abc.execute-api.us-east-1.amazonaws.com","http":{"method":"POST","path":"/mcp","sourceIp":"203.0.113.7"}},
				"body":"{\"jsonrpc\":\"2.0\"}","isBase64Encoded":false}`,
			want:   seen{Method: "POST", Path: "/mcp", Auth: "Bearer t3", Session: "s3", Body: `{"jsonrpc":"2.0"}`, Query: []string{"a", "b"}, Accept: []string{"application/json", "text/event-stream"}},
			decode: decodeV2, version: "2.0",
		},
		{
			name: "HTTP API v2: base64 body in, binary body out",
			event: `{"version":"2.0","routeKey":"POST /a/{token}","rawPath":"/a/tok","rawQueryString":"binary=1",
				"headers":{"authorization":"Bearer t4"},
				"requestContext":{"stage":"$default","http":{"method":"POST","path":"/a/tok"}},
				"body":"` + form + `","isBase64Encoded":true}`,
			want:   seen{Method: "POST", Path: "/a/tok", Auth: "Bearer t4", Body: "choice=approve&x=\x00\xff"},
			decode: decodeV2, binary: true, version: "2.0",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got seen
			out, err := New(echo(&got)).Invoke(context.Background(), []byte(tc.event))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("handler saw %+v, want %+v", got, tc.want)
			}
			var probe struct {
				Cookies *[]string `json:"cookies"`
			}
			_ = json.Unmarshal(out, &probe)
			if (probe.Cookies != nil) != (tc.version == "2.0") {
				t.Errorf("response %s: cookies field present = %v, want it only in a v2 response", out, probe.Cookies != nil)
			}
			r := tc.decode(t, out)
			if r.Status != http.StatusCreated || r.Header != "yes" {
				t.Errorf("status %d, X-Out %q; want 201, yes", r.Status, r.Header)
			}
			cookies := append([]string{}, r.Cookies...)
			sort.Strings(cookies)
			if want := []string{"a=1; HttpOnly", "b=2; Secure"}; !reflect.DeepEqual(cookies, want) {
				t.Errorf("cookies %q, want %q", cookies, want)
			}
			want := []byte("ok")
			if tc.binary {
				want = png
			}
			if string(r.Body) != string(want) {
				t.Errorf("body %q, want %q", r.Body, want)
			}
		})
	}
}

func TestMalformedEventIsAnError(t *testing.T) {
	var got seen
	h := New(echo(&got))
	for _, ev := range []string{`not json`, `{"version":"2.0","rawPath":"/x","body":"%%%","isBase64Encoded":true,"requestContext":{"http":{"method":"GET"}}}`} {
		if out, err := h.Invoke(context.Background(), []byte(ev)); err == nil {
			t.Errorf("%s: answered %s, want an error", ev, out)
		}
	}
	if got.Method != "" {
		t.Errorf("the handler ran on a malformed event: %+v", got)
	}
}
