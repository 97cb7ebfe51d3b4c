// The BM25 oracle: Lucene's own BM25Similarity over documents and queries
// already cut into tokens by boxd's analyzer (one per line, tokens
// separated by single spaces; Lucene's WhitespaceAnalyzer keeps them as
// they are). Run by bm25_test.go with Debian's liblucene8-java:
//
//   java -cp lucene-core.jar:lucene-analyzers-common.jar BM25Oracle.java DOCS QUERIES K K1 B
//
// Prints, per query, its top K as "query doc score" lines (score as
// Float.toString writes it: the shortest decimal that reads back as the
// same float).
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.lucene.analysis.core.WhitespaceAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.ByteBuffersDirectory;

public class BM25Oracle {
  public static void main(String[] args) throws Exception {
    List<String> docs = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
    List<String> queries = Files.readAllLines(Path.of(args[1]), StandardCharsets.UTF_8);
    int k = Integer.parseInt(args[2]);
    BM25Similarity sim = new BM25Similarity(Float.parseFloat(args[3]), Float.parseFloat(args[4]));
    ByteBuffersDirectory dir = new ByteBuffersDirectory();
    IndexWriterConfig cfg = new IndexWriterConfig(new WhitespaceAnalyzer()).setSimilarity(sim);
    try (IndexWriter w = new IndexWriter(dir, cfg)) {
      for (String d : docs) {
        Document doc = new Document();
        doc.add(new TextField("body", d, Field.Store.NO));
        w.addDocument(doc);
      }
      w.forceMerge(1);
    }
    StringBuilder out = new StringBuilder();
    try (DirectoryReader r = DirectoryReader.open(dir)) {
      IndexSearcher s = new IndexSearcher(r);
      s.setSimilarity(sim);
      BooleanQuery.setMaxClauseCount(4096);
      for (int qi = 0; qi < queries.size(); qi++) {
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        for (String t : queries.get(qi).split(" ")) {
          if (!t.isEmpty()) {
            b.add(new TermQuery(new Term("body", t)), BooleanClause.Occur.SHOULD);
          }
        }
        TopDocs td = s.search(b.build(), k);
        for (ScoreDoc sd : td.scoreDocs) {
          out.append(qi).append(' ').append(sd.doc).append(' ').append(sd.score).append('\n');
        }
      }
    }
    System.out.print(out);
  }
}
