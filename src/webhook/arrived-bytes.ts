import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors';

/**
 * The bytes of an encoded body (gzip, deflate, br) as they arrived, kept while it is decoded: a body
 * that does not decode is refused, and the quarantine keeps what was sent, not what it decoded to.
 * At most `max` bytes are kept, each piece only if `reserve` takes it (the receiver's memory budget);
 * beyond either, only their number is.
 */
export class ArrivedBytes {
  private pieces: Buffer[] | null = [];
  private held = 0;
  /** Bytes that arrived so far, kept or not. */
  bytes = 0;

  constructor(
    private readonly req: IncomingMessage,
    private readonly max: number,
    private readonly reserve: (bytes: number) => boolean,
    /** Gives back what `reserve` took for pieces no longer kept (drop). */
    private readonly release: (bytes: number) => void = () => undefined,
  ) {
    req.on('data', this.onData);
  }

  /** Whether pieces are kept now (and hold some of the budget). */
  get holding(): boolean {
    return this.pieces !== null && this.held > 0;
  }

  private readonly onData = (piece: Buffer): void => {
    this.bytes += piece.length;
    if (this.pieces === null) return;
    if (this.held + piece.length > this.max || !this.reserve(piece.length)) {
      this.drop();
      return;
    }
    this.pieces.push(piece);
    this.held += piece.length;
  };

  /**
   * Stops keeping, and gives back the budget the kept pieces held: the body decoded, was refused for
   * another reason, went to a file of its own, or its decoded bytes need the room (a copy kept in
   * case it does not decode never takes the budget from a body that does).
   */
  drop(): void {
    this.req.off('data', this.onData);
    if (this.pieces !== null && this.held > 0) this.release(this.held);
    this.pieces = null;
    this.held = 0;
  }

  /** What arrived, or null when it was more than could be kept; keeping stops. */
  take(): Buffer | null {
    this.req.off('data', this.onData);
    const pieces = this.pieces;
    this.pieces = null;
    return pieces === null ? null : Buffer.concat(pieces, this.held);
  }
}

/** An encoded body that does not decode (400 invalid_encoding), with what arrived of it for the quarantine. */
export class UndecodableBody extends AppError {
  constructor(
    encoding: string,
    /** What arrived, or null when it was more than could be kept. */
    readonly arrived: Buffer | null,
    /** How many bytes arrived. */
    readonly arrivedBytes: number,
    /** Whether the body had arrived whole when it was refused (the rest is not read). */
    readonly whole: boolean,
  ) {
    super('invalid_encoding', 400, `the body is not valid ${encoding} data`);
  }
}
