// Point-in-polygon for the G-code preview's click on an object's outline (the outlines come from the server's analysis).

/** Whether (x, y) in mm lies inside the polygon (even-odd rule: a ray to the right crosses its edges an odd number of times). */
export function insideOutline(poly: [number, number][], x: number, y: number): boolean {
  let inside = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i];
    const [xj, yj] = poly[j];
    if ((yi > y) !== (yj > y) && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}
