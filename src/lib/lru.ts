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

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Sets the key and says whether it was already there (a "seen before" filter). */
  touch(key: K, value: V): boolean {
    const known = this.entries.has(key);
    this.set(key, value);
    return known;
  }
}
