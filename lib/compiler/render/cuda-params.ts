// Reads a kernel's run-time params in the order kernel-ir.ts documents, with
// errors that name the kernel kind, the field and what was there.

export class ParamReader {
  #at = 0;
  constructor(
    private readonly params: readonly number[],
    private readonly kind: string,
  ) {}

  next(field: string): number {
    if (this.#at >= this.params.length) {
      throw new Error(`renderCuda: ${this.kind} params end before ${field} (index ${this.#at}, params ${JSON.stringify(this.params)})`);
    }
    return this.params[this.#at++]!;
  }

  take(count: number, field: string): number[] {
    if (!Number.isInteger(count) || count < 0) throw new Error(`renderCuda: ${this.kind} params give ${count} entries for ${field}`);
    return Array.from({ length: count }, () => this.next(field));
  }

  done(): void {
    if (this.#at !== this.params.length) {
      throw new Error(`renderCuda: ${this.kind} params have ${this.params.length - this.#at} entries past the documented layout (params ${JSON.stringify(this.params)})`);
    }
  }
}
