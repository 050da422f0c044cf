// Browser tests save screenshots for a reviewer and check they are not blank: the PNG is decoded here (IHDR,
// IDAT inflated, scanline filters undone) and its pixels counted, so a white or single-colour page fails.
import { inflateSync } from 'node:zlib';

export interface PixelCensus {
  width: number;
  height: number;
  /** Distinct colours (RGB). */
  colours: number;
  /** Share of pixels that differ from the most common colour (the background). */
  inked: number;
}

export function pngCensus(png: Uint8Array): PixelCensus {
  const buf = Buffer.from(png);
  if (buf.readUInt32BE(0) !== 0x89504e47) throw new Error('not a PNG');
  let pos = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (pos < buf.length) {
    const length = buf.readUInt32BE(pos);
    const type = buf.toString('latin1', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const [depth, colourType, , , interlace] = [data[8], data[9], data[10], data[11], data[12]];
      if (depth !== 8 || interlace !== 0 || (colourType !== 2 && colourType !== 6)) throw new Error(`PNG of depth ${depth}, colour type ${colourType}, interlace ${interlace}: not decoded here`);
      channels = colourType === 6 ? 4 : 3;
    } else if (type === 'IDAT') idat.push(data);
    pos += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const value = raw[y * (stride + 1) + 1 + x] as number;
      const left = x >= channels ? (pixels[y * stride + x - channels] as number) : 0;
      const up = y > 0 ? (pixels[(y - 1) * stride + x] as number) : 0;
      const upLeft = y > 0 && x >= channels ? (pixels[(y - 1) * stride + x - channels] as number) : 0;
      let predictor = 0;
      if (filter === 1) predictor = left;
      else if (filter === 2) predictor = up;
      else if (filter === 3) predictor = (left + up) >> 1;
      else if (filter === 4) {
        const p = left + up - upLeft;
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)];
        predictor = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
      }
      pixels[y * stride + x] = (value + predictor) & 0xff;
    }
  }
  const counts = new Map<number, number>();
  for (let i = 0; i < pixels.length; i += channels) {
    const rgb = ((pixels[i] as number) << 16) | ((pixels[i + 1] as number) << 8) | (pixels[i + 2] as number);
    counts.set(rgb, (counts.get(rgb) ?? 0) + 1);
  }
  const total = width * height;
  const background = Math.max(...counts.values());
  return { width, height, colours: counts.size, inked: (total - background) / total };
}
