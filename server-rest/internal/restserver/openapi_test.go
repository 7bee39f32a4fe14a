package restserver_test

import (
	"encoding/json"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

const openAPIFile = "../../../docs/openapi.yaml"

func loadOpenAPI(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(openAPIFile)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(b, &doc))
	require.True(t, strings.HasPrefix(doc["openapi"].(string), "3."), "an OpenAPI 3 document")
	return doc
}

// at walks doc along keys; nil when a key is missing.
func at(doc any, keys ...string) any {
	for _, k := range keys {
		m, ok := doc.(map[string]any)
		if !ok {
			return nil
		}
		doc = m[k]
	}
	return doc
}

func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	var documented []string
	for path, item := range doc["paths"].(map[string]any) {
		for method := range item.(map[string]any) {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	srv := newServer(testConfig(t), nil)
	var registered []string
	echoParam := regexp.MustCompile(`:(\w+)`)                                        // Echo's :tag is OpenAPI's {tag}
	for _, r := range srv.Handler().(interface{ Routes() []*echo.Route }).Routes() { // Echo, under the access log
		registered = append(registered, r.Method+" "+echoParam.ReplaceAllString(r.Path, "{$1}"))
	}
	slices.Sort(documented)
	slices.Sort(registered)
	assert.Equal(t, registered, documented, "every route is documented and every documented path is served")
}

func TestOpenAPIOperations(t *testing.T) {
	doc := loadOpenAPI(t)
	for path, item := range doc["paths"].(map[string]any) {
		responses := at(item, "get", "responses")
		require.NotNil(t, responses, path)
		codes := slices.Collect(maps.Keys(responses.(map[string]any)))
		assert.Contains(t, codes, "200", path)
		assert.Contains(t, codes, "405", path)
		if strings.HasPrefix(path, "/segment") {
			assert.Contains(t, codes, "404", "%s answers 404 while segment mode is off", path)
			assert.Contains(t, codes, "503", "%s answers 503 while segment mode opens", path)
		}
		if params := at(item, "get", "parameters"); params != nil {
			assert.Contains(t, codes, "400", "%s takes parameters, so it can answer 400", path)
			assert.Contains(t, codes, "503", "%s needs the ID service", path)
		}
	}
	checkRefs(t, doc, doc)
}

// checkRefs fails for every $ref that does not resolve inside doc.
func checkRefs(t *testing.T, doc, node any) {
	switch n := node.(type) {
	case map[string]any:
		for k, v := range n {
			if k == "$ref" {
				ref := v.(string)
				require.True(t, strings.HasPrefix(ref, "#/"), ref)
				assert.NotNil(t, at(doc, strings.Split(strings.TrimPrefix(ref, "#/"), "/")...), "unresolved %s", ref)
				continue
			}
			checkRefs(t, doc, v)
		}
	case []any:
		for _, v := range n {
			checkRefs(t, doc, v)
		}
	}
}

// TestOpenAPISchemasMatchResponses compares the documented JSON properties
// with the keys the server really sends.
func TestOpenAPISchemasMatchResponses(t *testing.T) {
	doc := loadOpenAPI(t)
	_, ts := startServer(t, testConfig(t, "--machine", "78", "--segment-tags", "order"))
	require.Equal(t, 200, get(t, ts.URL+"/segment/order").status, "a loaded tag has every field")
	cases := []struct{ schema, path string }{
		{"ExpId", "/expid?id=" + workedId},
		{"TransTime", "/transtime?time=1"},
		{"IdValue", "/makeid?" + workedQuery},
		{"IdValue", "/genid"},
		{"IdValue", "/segment/order"},
		{"SegmentList", "/segment"},
		{"Status", "/readyz"},
		{"ServerStatus", "/status"},
		{"Error", "/makeid?time=1&seq=-1"},
		{"Error", "/segment/nope"},
	}
	for _, tc := range cases {
		var body map[string]any
		require.NoError(t, json.Unmarshal([]byte(getJSON(t, ts.URL+tc.path).body), &body), tc.path)
		checkSchema(t, doc, tc.schema, tc.path, body)
	}
	var list struct{ Tags []map[string]any }
	require.NoError(t, json.Unmarshal([]byte(get(t, ts.URL+"/segment").body), &list))
	require.Len(t, list.Tags, 1)
	checkSchema(t, doc, "SegmentTag", "/segment", list.Tags[0])
}

// checkSchema asserts that body, the JSON object path sent, has every
// required property of schema and no undocumented one.
func checkSchema(t *testing.T, doc map[string]any, schema, path string, body map[string]any) {
	t.Helper()
	props := at(doc, "components", "schemas", schema, "properties")
	require.NotNil(t, props, schema)
	for key := range body {
		assert.Contains(t, props, key, "%s sends %q, undocumented in %s", path, key, schema)
	}
	for _, req := range at(doc, "components", "schemas", schema, "required").([]any) {
		assert.Contains(t, body, req, "%s lacks required %q of %s", path, req, schema)
	}
}
