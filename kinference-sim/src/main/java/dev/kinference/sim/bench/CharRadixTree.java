package dev.kinference.sim.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * SGLang's approximate radix tree over request text: one tree, each node remembering which tenants (workers) were
 * sent text through it and when. Not thread-safe.
 */
final class CharRadixTree {

  private static final class Node {
    CharSequence label;
    final Map<Character, Node> children = new HashMap<>(4);
    final Map<Integer, Long> tenants = new HashMap<>(2);
    @Nullable Node parent;

    Node(CharSequence label, @Nullable Node parent) {
      this.label = label;
      this.parent = parent;
    }
  }

  /** The longest match and the tenant most recently seen at its end. */
  record Match(int matchedChars, int tenant) {}

  private final Node root = new Node("", null);
  private final long[] tenantChars;

  CharRadixTree(int tenants) {
    this.tenantChars = new long[tenants];
  }

  /** Characters of text held for {@code tenant}. */
  long size(int tenant) {
    return tenantChars[tenant];
  }

  /** The tenant holding the fewest characters (lowest index on ties). */
  int smallestTenant() {
    int best = 0;
    for (int t = 1; t < tenantChars.length; t++) {
      if (tenantChars[t] < tenantChars[best]) {
        best = t;
      }
    }
    return best;
  }

  /** The longest prefix of {@code text} held by any tenant, and the most recent tenant at its end (-1 if none). */
  Match match(CharSequence text) {
    Node node = root;
    int pos = 0;
    int tenant = -1;
    while (pos < text.length()) {
      Node child = node.children.get(text.charAt(pos));
      if (child == null) {
        break;
      }
      int common = common(child.label, text, pos);
      pos += common;
      tenant = mostRecent(child, tenant);
      if (common < child.label.length()) {
        break;
      }
      node = child;
    }
    return new Match(pos, tenant);
  }

  /** Records that {@code text} was sent to {@code tenant} at {@code now}. */
  void insert(CharSequence text, int tenant, long now) {
    Node node = root;
    int pos = 0;
    while (pos < text.length()) {
      Node child = node.children.get(text.charAt(pos));
      if (child == null) {
        Node leaf = new Node(text.subSequence(pos, text.length()).toString(), node);
        node.children.put(text.charAt(pos), leaf);
        touch(leaf, tenant, now);
        return;
      }
      int common = common(child.label, text, pos);
      if (common < child.label.length()) {
        child = split(node, child, common);
      }
      touch(child, tenant, now);
      pos += common;
      node = child;
    }
  }

  /** Removes least recently used leaves of {@code tenant} until it holds at most {@code maxChars}. */
  void evict(int tenant, long maxChars) {
    if (tenantChars[tenant] <= maxChars) {
      return;
    }
    List<Node> leaves = new ArrayList<>();
    collectLeaves(root, tenant, leaves);
    leaves.sort((a, b) -> Long.compare(a.tenants.getOrDefault(tenant, 0L), b.tenants.getOrDefault(tenant, 0L)));
    for (Node leaf : leaves) {
      if (tenantChars[tenant] <= maxChars) {
        return;
      }
      Node n = leaf;
      // remove the tenant from the leaf and from ancestors no other child of the tenant keeps
      while (n != root && n.tenants.containsKey(tenant) && !childHasTenant(n, tenant)) {
        n.tenants.remove(tenant);
        tenantChars[tenant] -= n.label.length();
        Node parent = java.util.Objects.requireNonNull(n.parent);
        if (n.tenants.isEmpty() && n.children.isEmpty()) {
          parent.children.remove(n.label.charAt(0));
        }
        n = parent;
      }
    }
  }

  private static boolean childHasTenant(Node n, int tenant) {
    for (Node c : n.children.values()) {
      if (c.tenants.containsKey(tenant)) {
        return true;
      }
    }
    return false;
  }

  private void collectLeaves(Node n, int tenant, List<Node> out) {
    boolean leafForTenant = n != root && n.tenants.containsKey(tenant) && !childHasTenant(n, tenant);
    if (leafForTenant) {
      out.add(n);
    }
    for (Node c : n.children.values()) {
      collectLeaves(c, tenant, out);
    }
  }

  private void touch(Node n, int tenant, long now) {
    if (n.tenants.put(tenant, now) == null) {
      tenantChars[tenant] += n.label.length();
    }
  }

  private Node split(Node parent, Node child, int at) {
    Node mid = new Node(child.label.subSequence(0, at).toString(), parent);
    // the split keeps every tenant's character count: the label is only cut in two
    mid.tenants.putAll(child.tenants);
    parent.children.put(mid.label.charAt(0), mid);
    child.label = child.label.subSequence(at, child.label.length()).toString();
    child.parent = mid;
    mid.children.put(child.label.charAt(0), child);
    return mid;
  }

  private static int mostRecent(Node n, int fallback) {
    int best = fallback;
    long bestTime = Long.MIN_VALUE;
    for (Map.Entry<Integer, Long> e : n.tenants.entrySet()) {
      if (e.getValue() > bestTime || (e.getValue() == bestTime && e.getKey() < best)) {
        best = e.getKey();
        bestTime = e.getValue();
      }
    }
    return best;
  }

  private static int common(CharSequence label, CharSequence text, int from) {
    int n = Math.min(label.length(), text.length() - from);
    int i = 0;
    while (i < n && label.charAt(i) == text.charAt(from + i)) {
      i++;
    }
    return i;
  }
}
