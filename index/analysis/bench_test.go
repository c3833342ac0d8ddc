package analysis

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Sentences of documentation in English and in Chinese, which
// BenchmarkAnalyzeBytes shuffles into texts of one byte count.
var (
	benchEnglish = []string{
		"The server listens on port 9090 by default; set --web.listen-address to change it.",
		"Retention is fifteen days unless storage.tsdb.retention.time says otherwise.",
		"Each scrape target is polled at the interval the job configures, or the global one.",
		"Recording rules precompute expensive expressions and save their results as new series.",
		"When the disk fills up, the oldest blocks are removed first to free space.",
		"Use the maxIdleConns option to bound the idle connections kept per host.",
		"Alerts fire after the condition has held for the duration given in the rule.",
		"The configuration file is reloaded on SIGHUP or when the reload endpoint is called.",
	}
	benchChinese = []string{
		"服务的默认端口是九零九零，可以在配置文件中通过监听地址修改。",
		"数据默认保留十五天，除非存储保留时间另有设置。",
		"每个抓取目标按照任务配置的间隔轮询，未配置时使用全局间隔。",
		"记录规则预先计算开销较大的表达式，并把结果保存为新的时间序列。",
		"磁盘写满时，最早的数据块会被首先删除以释放空间。",
		"使用最大空闲连接选项限制每个主机保留的空闲连接数量。",
		"告警在条件持续满足规则中给定的时长之后才会触发。",
		"配置文件在收到挂起信号或调用重新加载接口时重新读取。",
	}
)

// benchChunks shuffles sentences into chunks of about 1,500 bytes, n bytes
// in all.
func benchChunks(sentences []string, n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	var chunks []string
	var b strings.Builder
	for total := 0; total < n; {
		s := sentences[r.IntN(len(sentences))]
		b.WriteString(s)
		b.WriteByte('\n')
		total += len(s) + 1
		if b.Len() >= 1500 {
			chunks = append(chunks, b.String())
			b.Reset()
		}
	}
	return append(chunks, b.String())
}

// BenchmarkAnalyzeBytes analyses the same number of bytes of English and
// of Chinese documentation (Analyze, as an index build calls it per chunk):
// CJK text must cost no more per byte than Latin text. terms/KiB is what
// the postings then write.
func BenchmarkAnalyzeBytes(b *testing.B) {
	for _, c := range []struct {
		name      string
		sentences []string
	}{{"en", benchEnglish}, {"zh", benchChinese}} {
		b.Run(c.name, func(b *testing.B) {
			chunks := benchChunks(c.sentences, 1<<20)
			size, terms := 0, 0
			for _, ch := range chunks {
				size += len(ch)
				terms += len(Analyze(Fields{Body: ch}).Terms)
			}
			b.SetBytes(int64(size))
			b.ResetTimer()
			for range b.N {
				for _, ch := range chunks {
					Analyze(Fields{Path: "docs/config.md", Heading: "Configuration", Body: ch})
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(size), "ns/byte")
			b.ReportMetric(float64(terms)/float64(size)*1024, "distinct-terms/KiB")
		})
	}
}
