package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const dashboardFile = "grafana/cand-dashboard.json"

// datasourceRef is what every panel and target must point at: the dashboard's
// ${datasource} variable, so the importer picks the Prometheus data source.
var datasourceRef = datasource{Type: "prometheus", UID: "${datasource}"}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type dashboard struct {
	Title         string  `json:"title"`
	UID           string  `json:"uid"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
	Templating    struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Definition string          `json:"definition"`
			Datasource *datasource     `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID          int         `json:"id"`
	Type        string      `json:"type"`
	Title       string      `json:"title"`
	Datasource  *datasource `json:"datasource"`
	GridPos     struct{ X, Y, W, H int }
	Panels      []panel `json:"panels"` // inside a row
	FieldConfig struct {
		Defaults struct {
			Mappings []struct {
				Type    string `json:"type"`
				Options map[string]struct {
					Text string `json:"text"`
				} `json:"options"`
			} `json:"mappings"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Targets []struct {
		RefID      string      `json:"refId"`
		Expr       string      `json:"expr"`
		Datasource *datasource `json:"datasource"`
	} `json:"targets"`
}

func loadDashboard(t *testing.T) *dashboard {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	d := new(dashboard)
	if err := json.Unmarshal(data, d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// queryPanels returns the panels that show data: every panel, rows replaced by
// the panels they hold.
func queryPanels(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		if p.Type == "row" {
			out = append(out, queryPanels(p.Panels)...)
		} else {
			out = append(out, p)
		}
	}
	return out
}

// Grafana variables the queries may use, and what they stand for when the test
// hands a query to promtool.
var grafanaVars = map[string]string{
	"controller":      "can0",
	"__rate_interval": "1m",
}

var grafanaVar = regexp.MustCompile(`\$(\w+)|\$\{(\w+)\}`)

// substitute replaces the Grafana variables in expr as Grafana would for one
// selected controller; it reports variables it does not know.
func substitute(expr string) (string, error) {
	var err error
	out := grafanaVar.ReplaceAllStringFunc(expr, func(v string) string {
		m := grafanaVar.FindStringSubmatch(v)
		name := m[1] + m[2]
		val, ok := grafanaVars[name]
		if !ok {
			err = fmt.Errorf("unknown variable $%s", name)
		}
		return val
	})
	return out, err
}

func TestDashboardStructure(t *testing.T) {
	d := loadDashboard(t)
	if d.Title == "" || d.UID == "" || d.SchemaVersion == 0 {
		t.Errorf("title %q, uid %q, schemaVersion %d: all must be set", d.Title, d.UID, d.SchemaVersion)
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		switch v.Name {
		case "datasource":
			if v.Type != "datasource" || string(v.Query) != `"prometheus"` {
				t.Errorf("variable datasource: type %q, query %s; want a Prometheus data source variable", v.Type, v.Query)
			}
		case "controller":
			const want = "label_values(cand_rx_frames_total, controller)"
			if v.Type != "query" || v.Definition != want || !strings.Contains(string(v.Query), want) ||
				v.Datasource == nil || *v.Datasource != datasourceRef {
				t.Errorf("variable controller: type %q, definition %q, query %s, datasource %v; want %s on ${datasource}",
					v.Type, v.Definition, v.Query, v.Datasource, want)
			}
		}
	}
	if !vars["datasource"] || !vars["controller"] {
		t.Errorf("template variables %v, want datasource and controller", vars)
	}

	panels := queryPanels(d.Panels)
	if len(panels) == 0 {
		t.Fatal("no panels")
	}
	ids := map[int]bool{}
	for _, p := range panels {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if ids[p.ID] || p.ID == 0 {
			t.Errorf("%s: id missing or used twice", where)
		}
		ids[p.ID] = true
		if p.Title == "" {
			t.Errorf("%s: no title", where)
		}
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X < 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("%s: gridPos %+v outside Grafana's 24 columns", where, p.GridPos)
		}
		if p.Datasource == nil || *p.Datasource != datasourceRef {
			t.Errorf("%s: datasource %v, want %v", where, p.Datasource, datasourceRef)
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: no target", where)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.Expr == "" || tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("%s: target %q: empty expr, or refId missing or used twice", where, tg.RefID)
			}
			refs[tg.RefID] = true
			if tg.Datasource == nil || *tg.Datasource != datasourceRef {
				t.Errorf("%s: target %s: datasource %v, want %v", where, tg.RefID, tg.Datasource, datasourceRef)
			}
			if _, err := substitute(tg.Expr); err != nil {
				t.Errorf("%s: target %s: %v in %s", where, tg.RefID, err, tg.Expr)
			}
		}
	}
}

// Every query, its variables substituted, is a valid PromQL expression:
// promtool checks each as a recording rule.
func TestDashboardPromQL(t *testing.T) {
	d := loadDashboard(t)
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	n := 0
	for _, p := range queryPanels(d.Panels) {
		for _, tg := range p.Targets {
			expr, err := substitute(tg.Expr)
			if err != nil {
				t.Errorf("panel %d target %s: %v", p.ID, tg.RefID, err)
				continue
			}
			quoted, err := json.Marshal(expr) // a JSON string is a YAML flow scalar
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&rules, "      - record: dashboard:panel_%d_%s\n        expr: %s\n", p.ID, tg.RefID, quoted)
			n++
		}
	}
	path := filepath.Join(t.TempDir(), "dashboard-queries.yml")
	if err := os.WriteFile(path, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := promtool(t, "check", "rules", path)
	if want := fmt.Sprintf("SUCCESS: %d rules found", n); !strings.Contains(out, want) {
		t.Errorf("promtool check rules: want %q in its output:\n%s", want, out)
	}
}

// Every metric a query or the controller variable reads is exported by cand.
func TestDashboardMetricNames(t *testing.T) {
	known := exportedNames(t)
	d := loadDashboard(t)
	for _, p := range queryPanels(d.Panels) {
		for _, tg := range p.Targets {
			checkNames(t, fmt.Sprintf("%s panel %d %q target %s", dashboardFile, p.ID, p.Title, tg.RefID), tg.Expr, known)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValues.FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("%s variable %s: %q is no label_values(series, label)", dashboardFile, v.Name, v.Definition)
			continue
		}
		checkNames(t, dashboardFile+" variable "+v.Name, m[1], known)
	}
}

// stateNumber matches one "N state-name" of cand_bus_state's HELP text.
var stateNumber = regexp.MustCompile(`(\d+) (error-active|error-warning|error-passive|bus-off)`)

// labelValues matches Grafana's label_values(series selector, label name).
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`)

// The panels showing cand_bus_state name its values as cand's HELP text numbers
// them ("0 error-active, 1 error-warning, ..."), in the words of ip -details
// link show.
func TestDashboardBusStateNames(t *testing.T) {
	want := map[string]string{}
	for _, m := range stateNumber.FindAllStringSubmatch(help(t, "cand_bus_state"), -1) {
		want[m[1]] = strings.ToUpper(m[2])
	}
	if len(want) != 4 {
		t.Fatalf("cand_bus_state's HELP names states %v, want the four fault-confinement states", want)
	}
	found := 0
	for _, p := range queryPanels(loadDashboard(t).Panels) {
		if len(p.Targets) == 0 || !strings.HasPrefix(p.Targets[0].Expr, "cand_bus_state{") {
			continue
		}
		found++
		got := map[string]string{}
		for _, m := range p.FieldConfig.Defaults.Mappings {
			for v, o := range m.Options {
				got[v] = o.Text
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("panel %d %q: value mappings %v, want %v", p.ID, p.Title, got, want)
		}
	}
	if found == 0 {
		t.Error("no panel shows cand_bus_state")
	}
}
