package neural

import (
	"math"

	"boxd/engine/diarize"
	"boxd/engine/diarize/cluster"
)

// noCluster marks a local speaker that belongs to no cluster (inactive, or
// without a usable embedding).
const noCluster = -1

// assign clusters the windows' embeddings and returns, per window and
// local speaker, its cluster (noCluster for none), and how many clusters
// there are.
//
// The embeddings of speakers that talk alone long enough (window.train)
// are clustered by cluster.Agglomerative within o's bounds; when none do,
// all embeddings are. Clusters smaller than pyannote 3.1's
// min_cluster_size (Config.MinClusterSize, but at most 10 % of the
// clustered embeddings and at least 1) are dissolved when enough large
// ones remain for o.MinSpeakers. Then every embedding, clustered or not,
// goes to the cluster whose centroid (mean of its unit members) is most
// similar, the active speakers of one window to distinct clusters when
// there are enough (the assignment with the largest total similarity).
//
// This departs from pyannote 3.1 in two ways: pyannote looks for another
// dendrogram cut when the number of large clusters is out of bounds,
// where this keeps the small clusters instead (cluster.Agglomerative has
// already bounded the total), and pyannote 3.1 assigns each speaker on
// its own, where community-1 (VBx) constrains as here.
func (d *Diarizer) assign(wins []window, o diarize.Options) ([][LocalSpeakers]int, int) {
	var train, all [][]float32
	for c := range wins {
		for s := range LocalSpeakers {
			e := wins[c].emb[s]
			if e == nil {
				continue
			}
			all = append(all, e)
			if wins[c].train[s] {
				train = append(train, e)
			}
		}
	}
	if len(all) == 0 {
		return nil, 0
	}
	if len(train) == 0 {
		train = all
	}
	labels := cluster.Agglomerative(train, nil, d.cfg.Threshold, o.MinSpeakers, o.MaxSpeakers)
	centroids := centroidsOf(train, labels, d.cfg.MinClusterSize, o.MinSpeakers)

	clusters := make([][LocalSpeakers]int, len(wins))
	for c := range wins {
		clusters[c] = assignWindow(&wins[c], centroids)
	}
	return clusters, len(centroids)
}

// centroidsOf returns the mean of each cluster's members, leaving out the
// clusters with fewer than pyannote's minimum size when at least
// max(1, minSpeakers) clusters reach it.
func centroidsOf(vecs [][]float32, labels []int, minClusterSize, minSpeakers int) [][]float64 {
	k := 0
	for _, l := range labels {
		k = max(k, l+1)
	}
	size := make([]int, k)
	for _, l := range labels {
		size[l]++
	}
	minSize := min(minClusterSize, max(1, int(math.Round(0.1*float64(len(vecs))))))
	large := 0
	for _, n := range size {
		if n >= minSize {
			large++
		}
	}
	keep := make([]bool, k)
	for l, n := range size {
		keep[l] = n >= minSize || large < max(1, minSpeakers)
	}
	dim := len(vecs[0])
	sums := make([][]float64, k)
	for i, v := range vecs {
		l := labels[i]
		if !keep[l] {
			continue
		}
		if sums[l] == nil {
			sums[l] = make([]float64, dim)
		}
		for j, x := range v {
			sums[l][j] += float64(x)
		}
	}
	var centroids [][]float64
	for l, s := range sums {
		if s == nil {
			continue
		}
		for j := range s {
			s[j] /= float64(size[l])
		}
		centroids = append(centroids, s)
	}
	return centroids
}

// assignWindow gives each of w's local speakers with an embedding the
// most similar centroid, distinct ones when there are enough centroids.
func assignWindow(w *window, centroids [][]float64) [LocalSpeakers]int {
	out := [LocalSpeakers]int{noCluster, noCluster, noCluster}
	var speakers []int
	var sim [LocalSpeakers][]float64
	for s := range LocalSpeakers {
		if w.emb[s] == nil {
			continue
		}
		speakers = append(speakers, s)
		sim[s] = make([]float64, len(centroids))
		for k, c := range centroids {
			sim[s][k] = cosine(w.emb[s], c)
		}
	}
	if len(speakers) <= len(centroids) {
		best := math.Inf(-1)
		var cur [LocalSpeakers]int
		var used = make([]bool, len(centroids))
		var search func(i int, total float64)
		search = func(i int, total float64) {
			if i == len(speakers) {
				if total > best {
					best = total
					for _, s := range speakers {
						out[s] = cur[s]
					}
				}
				return
			}
			s := speakers[i]
			for k := range centroids {
				if used[k] {
					continue
				}
				used[k], cur[s] = true, k
				search(i+1, total+sim[s][k])
				used[k] = false
			}
		}
		search(0, 0)
		return out
	}
	for _, s := range speakers {
		best := 0
		for k := range centroids {
			if sim[s][k] > sim[s][best] {
				best = k
			}
		}
		out[s] = best
	}
	return out
}

// cosine is the cosine similarity of a unit vector u and c; 0 when c is
// zero.
func cosine(u []float32, c []float64) float64 {
	var dot, cc float64
	for i, x := range u {
		dot += float64(x) * c[i]
		cc += c[i] * c[i]
	}
	if cc == 0 {
		return 0
	}
	return dot / math.Sqrt(cc)
}
