package serve

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lore-cli/lore/internal/admit"
)

// metrics are the server's Prometheus series, on a registry of its own so
// that two servers in one process (tests) never collide.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	inFlight prometheus.Gauge
	duration *prometheus.HistogramVec
	stages   *prometheus.HistogramVec
}

func newMetrics(eng Engine) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lore_http_requests_total",
			Help: "HTTP requests answered, by route and status code.",
		}, []string{"route", "code"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "lore_http_requests_in_flight",
			Help: "HTTP requests being answered now.",
		}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lore_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, to its last byte, by route.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"route"}),
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lore_stage_duration_seconds",
			Help:    "Time spent in each stage of a search or an answer (condense, retrieve, rerank, web, generate).",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"stage"}),
	}
	m.reg.MustRegister(m.requests, m.inFlight, m.duration, m.stages,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.reg.MustRegister(
		newLoadCollector(eng, "lore_queue_depth", "Requests waiting for a shared resource (chat, embed, rerank).",
			func(s admit.Stats) int { return s.Waiting }),
		newLoadCollector(eng, "lore_queue_running", "Requests holding a shared resource (chat, embed, rerank).",
			func(s admit.Stats) int { return s.Running }))
	return m
}

// loadCollector reads the engine's admission queues at scrape time.
type loadCollector struct {
	eng  Engine
	desc *prometheus.Desc
	pick func(admit.Stats) int
}

func newLoadCollector(eng Engine, name, help string, pick func(admit.Stats) int) *loadCollector {
	return &loadCollector{eng: eng, desc: prometheus.NewDesc(name, help, []string{"resource"}, nil), pick: pick}
}

func (c *loadCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *loadCollector) Collect(ch chan<- prometheus.Metric) {
	for resource, s := range c.eng.Load() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(c.pick(s)), resource)
	}
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func (m *metrics) observe(route string, code int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.duration.WithLabelValues(route).Observe(d.Seconds())
}

func (m *metrics) stage(name string, d time.Duration) {
	if d > 0 {
		m.stages.WithLabelValues(name).Observe(d.Seconds())
	}
}
