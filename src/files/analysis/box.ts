// Bounding boxes of the analysis (printing area, travel area), grown point by point.

/** Axis-aligned box accumulated from points; min/max ±Infinity until a point is seen. */
export class Box {
  minX = Infinity; maxX = -Infinity;
  minY = Infinity; maxY = -Infinity;
  minZ = Infinity; maxZ = -Infinity;
  add(x: number, y: number, z: number): void {
    if (x < this.minX) this.minX = x;
    if (x > this.maxX) this.maxX = x;
    if (y < this.minY) this.minY = y;
    if (y > this.maxY) this.maxY = y;
    if (z < this.minZ) this.minZ = z;
    if (z > this.maxZ) this.maxZ = z;
  }
}
