/**
 * A Map bounded to `limit` entries that forgets the least recently used one first: for caches
 * filled from request input, which must not grow without bound.
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly limit: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The value, now the most recently used. */
  get(key: K): V | undefined {
    if (!this.entries.has(key)) return undefined;
    const value = this.entries.get(key)!;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Sets the value, most recently used; returns the entry this pushed out, if any. */
  set(key: K, value: V): [K, V] | undefined {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size <= this.limit) return undefined;
    const oldest = this.entries.entries().next().value!;
    this.entries.delete(oldest[0]);
    return oldest;
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  /** Sets the key and says whether it was already there (a "seen before" filter). */
  touch(key: K, value: V): boolean {
    const known = this.entries.has(key);
    this.set(key, value);
    return known;
  }
}
